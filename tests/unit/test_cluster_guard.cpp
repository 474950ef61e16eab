// The cluster guard's parts without sockets: the handshake's state machine (the right secret is let
// in; a wrong one, none, or garbage is refused) and the frame check (sizes bounded before anything
// is allocated, one node per connection, no frame that speaks for another node).
#include "cluster/guard/frame_check.hpp"
#include "cluster/guard/guard_protocol.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/io/basp/header.hpp>
#include <caf/io/basp/message_type.hpp>
#include <caf/io/middleman.hpp>

#include <catch2/catch.hpp>

namespace {

namespace guard = am::detail::guard;
using caf::io::basp::message_type;

/// The client's side of a handshake against `server`, fed in pieces of `step` bytes.
/// `server_proved` tells whether the server proved `client_secret`.
guard::server_handshake::state run_handshake(guard::server_handshake& server, const std::string& client_secret,
                                             std::size_t step, bool* server_proved = nullptr) {
  guard::hello h{!client_secret.empty(), am::detail::random_bytes(guard::nonce_size)};
  std::string to_client;
  auto hello = guard::encode(h);
  for (std::size_t at = 0; at < hello.size(); at += step)
    server.feed(std::string_view(hello).substr(at, step), to_client);
  if (server.current() != guard::server_handshake::state::await_proof)
    return server.current();
  auto answer = guard::decode_answer(to_client);
  REQUIRE(answer);
  CHECK(answer->verdict == guard::verdict::go_on);
  if (server_proved)
    *server_proved = am::detail::equal_macs(answer->proof, guard::server_proof(client_secret, h.nonce, answer->nonce));
  auto proof = guard::client_proof(client_secret, h.nonce, answer->nonce);
  std::string bytes(reinterpret_cast<const char*>(proof.data()), proof.size());
  std::string last;
  for (std::size_t at = 0; at < bytes.size(); at += step)
    server.feed(std::string_view(bytes).substr(at, step), last);
  return server.current();
}

/// A configuration whose actor system has a node id (CAF 0.17 gives one only with the middleman).
caf::actor_system_config& with_middleman(caf::actor_system_config& cfg) {
  cfg.load<caf::io::middleman>();
  return cfg;
}

struct frames {
  caf::actor_system_config cfg;
  caf::actor_system sys{with_middleman(cfg)};

  /// A header CAF deems valid for `op` (caf::io::basp::valid: which actor ids a kind carries).
  std::string header(message_type op, std::uint32_t payload_len, std::uint8_t flags = 0) {
    bool no_actors = op == message_type::client_handshake || op == message_type::heartbeat;
    caf::actor_id source = no_actors ? 0 : 1;
    caf::actor_id dest = no_actors || op == message_type::down_message ? 0 : 2;
    std::uint64_t op_data = op == message_type::server_handshake ? 1 : 0;
    caf::io::basp::header hdr{op, flags, payload_len, op_data, source, dest};
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    REQUIRE(!sink(hdr));
    return {buf.begin(), buf.end()};
  }
  template <class... Ts>
  std::string payload(const Ts&... xs) {
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    REQUIRE(!sink(xs...));
    return {buf.begin(), buf.end()};
  }
  /// Feeds a whole frame (header, then payload); returns the first refusal or "".
  std::string feed(guard::frame_check& check, message_type op, const std::string& body, std::uint8_t flags = 0) {
    auto h = header(op, static_cast<std::uint32_t>(body.size()), flags);
    if (auto why = check.next(h.data(), h.size()); !why.empty())
      return why;
    return body.empty() ? std::string{} : check.next(body.data(), body.size());
  }
};

/// A node id other than `sys`'s: another actor system's.
caf::node_id other_node() {
  caf::actor_system_config cfg;
  caf::actor_system other{with_middleman(cfg)};
  return other.node();
}

} // namespace

TEST_CASE("the guard lets in a process with the cluster's secret, in any chunking", "[unit][cluster][guard]") {
  for (std::size_t step : {std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
    guard::server_handshake server("s3cret");
    bool proved = false;
    CHECK(run_handshake(server, "s3cret", step, &proved) == guard::server_handshake::state::admitted);
    CHECK(proved);
  }
  guard::server_handshake open_server("");
  CHECK(run_handshake(open_server, "", 5) == guard::server_handshake::state::admitted);
}

TEST_CASE("the guard refuses a wrong secret, no secret and garbage", "[unit][cluster][guard]") {
  guard::server_handshake wrong("s3cret");
  bool proved = true;
  CHECK(run_handshake(wrong, "another", 3, &proved) == guard::server_handshake::state::refused);
  CHECK(!proved); // the client sees that this server does not hold its secret either
  CHECK(wrong.reason().find("proof") != std::string::npos);

  guard::server_handshake none("s3cret");
  CHECK(run_handshake(none, "", 41) == guard::server_handshake::state::refused);
  CHECK(none.reason().find("no cluster secret") != std::string::npos);

  guard::server_handshake junk("s3cret");
  std::string out;
  junk.feed("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\n\r\n", out);
  CHECK(junk.current() == guard::server_handshake::state::refused);
  CHECK(out.empty()); // nothing is said to a peer that does not speak the protocol
}

TEST_CASE("a frame header that claims more than the limit is refused before its payload", "[unit][cluster][guard]") {
  frames f;
  guard::frame_check check(guard::frame_check::peer::member, 1 << 20, f.sys.node(),
                           std::make_shared<guard::node_bindings>());
  auto h = f.header(message_type::client_handshake, 0x7fffffffu);
  auto why = check.next(h.data(), h.size());
  CHECK(why.find("claims 2147483647 bytes, over the limit of 1048576") != std::string::npos);
  guard::frame_check coordinator(guard::frame_check::peer::coordinator, 1 << 20, f.sys.node(), nullptr);
  CHECK(!coordinator.next(h.data(), h.size()).empty());
}

TEST_CASE("a member connection is bound to the node of its handshake", "[unit][cluster][guard]") {
  frames f;
  auto bindings = std::make_shared<guard::node_bindings>();
  auto me = other_node();
  auto victim = other_node();
  guard::frame_check check(guard::frame_check::peer::member, 1 << 20, f.sys.node(), bindings);
  // Nothing but a client handshake comes first.
  {
    guard::frame_check early(guard::frame_check::peer::member, 1 << 20, f.sys.node(), bindings);
    CHECK(f.feed(early, message_type::direct_message, "x").find("before its handshake") != std::string::npos);
  }
  CHECK(f.feed(check, message_type::client_handshake, f.payload(me)).empty());
  // CAF repeats it with the select-connection flag: the same node passes.
  CHECK(f.feed(check, message_type::client_handshake, f.payload(me), 2).empty());
  CHECK(f.feed(check, message_type::heartbeat, "").empty());
  std::vector<caf::strong_actor_ptr> stages;
  CHECK(f.feed(check, message_type::routed_message, f.payload(me, f.sys.node(), stages)).empty());
  // Speaking for another node ends the connection, whatever the frame.
  CHECK(f.feed(check, message_type::routed_message, f.payload(victim, f.sys.node(), stages)).find("claiming to come from")
        != std::string::npos);
  guard::frame_check again(guard::frame_check::peer::member, 1 << 20, f.sys.node(), bindings);
  CHECK(f.feed(again, message_type::client_handshake, f.payload(me)).find("another connection holds")
        != std::string::npos);
  guard::frame_check down(guard::frame_check::peer::member, 1 << 20, f.sys.node(), bindings);
  CHECK(f.feed(down, message_type::client_handshake, f.payload(victim)).empty());
  CHECK(f.feed(down, message_type::down_message, f.payload(me, f.sys.node())).find("claiming to come from")
        != std::string::npos);
  guard::frame_check self_claim(guard::frame_check::peer::member, 1 << 20, f.sys.node(), bindings);
  CHECK(f.feed(self_claim, message_type::client_handshake, f.payload(f.sys.node())).find("own node")
        != std::string::npos);
  guard::frame_check server_hs(guard::frame_check::peer::member, 1 << 20, f.sys.node(), bindings);
  CHECK(!f.feed(server_hs, message_type::server_handshake, f.payload(me)).empty());
}

TEST_CASE("a node is free again once the connection that held it ends", "[unit][cluster][guard]") {
  frames f;
  auto bindings = std::make_shared<guard::node_bindings>();
  auto node = other_node();
  {
    guard::frame_check first(guard::frame_check::peer::member, 1 << 20, f.sys.node(), bindings);
    CHECK(f.feed(first, message_type::client_handshake, f.payload(node)).empty());
  }
  guard::frame_check second(guard::frame_check::peer::member, 1 << 20, f.sys.node(), bindings);
  CHECK(f.feed(second, message_type::client_handshake, f.payload(node)).empty());
}
