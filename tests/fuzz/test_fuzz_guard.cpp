// Bounded fuzzing of the cluster guard's parsers (cluster/guard/): the handshake's state
// machine and the BASP frame check get mutated valid input and random bytes in random pieces. Each
// must end in "let in", "refused" or "waiting for more", never a crash or undefined behaviour (the
// ASan+UBSan build runs this too). AM_FUZZ_SEED and AM_FUZZ_ITERATIONS (a multiplier) widen a run.
#include "cluster/guard/frame_check.hpp"
#include "cluster/guard/guard_protocol.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/io/basp/header.hpp>
#include <caf/io/basp/message_type.hpp>
#include <caf/io/middleman.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <random>

namespace {

namespace guard = am::detail::guard;
using caf::io::basp::message_type;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  return text ? std::strtoull(text, nullptr, 10) : fallback;
}

/// Flips, overwrites, drops or inserts a few bytes.
void mutate(std::string& bytes, std::mt19937_64& rng) {
  auto edits = 1 + rng() % 4;
  for (std::uint64_t k = 0; k < edits; ++k) {
    auto at = bytes.empty() ? 0 : rng() % bytes.size();
    switch (rng() % 4) {
      case 0:
        if (!bytes.empty())
          bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8)));
        break;
      case 1:
        if (!bytes.empty())
          bytes[at] = static_cast<char>(rng() % 3 == 0 ? 0xff : rng());
        break;
      case 2:
        if (!bytes.empty())
          bytes.erase(at, 1);
        break;
      default:
        bytes.insert(at, 1, static_cast<char>(rng()));
    }
  }
}

} // namespace

TEST_CASE("fuzz: the guard's handshake takes any bytes in any pieces", "[fuzz][cluster][guard]") {
  std::mt19937_64 rng(env_number("AM_FUZZ_SEED", 0x9a4d));
  auto iterations = 5000 * env_number("AM_FUZZ_ITERATIONS", 1);
  int admitted = 0;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    std::string secret = rng() % 2 ? "s3cret" : "";
    guard::server_handshake server(secret);
    guard::hello h{rng() % 2 == 0, am::detail::random_bytes(guard::nonce_size)};
    std::string input = guard::encode(h) + std::string(guard::proof_size, '\0');
    if (rng() % 4 != 0)
      mutate(input, rng);
    std::string out;
    std::size_t at = 0;
    while (at < input.size() && server.wanted() > 0) {
      auto piece = 1 + rng() % 50;
      at += server.feed(std::string_view(input).substr(at, piece), out);
    }
    auto st = server.current();
    CHECK(out.size() <= guard::answer_size + 1);
    if (st == guard::server_handshake::state::admitted) {
      ++admitted;
      CHECK(secret.empty()); // nobody proves a secret by chance
    }
  }
  CHECK(admitted > 0); // the unmutated inputs without a secret get in
}

TEST_CASE("fuzz: the frame check takes any frames without crashing or passing a forged source",
          "[fuzz][cluster][guard]") {
  // Node ids need CAF's middleman (without it, CAF 0.17 gives none).
  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  caf::actor_system_config other_cfg;
  other_cfg.load<caf::io::middleman>();
  caf::actor_system other{other_cfg};
  REQUIRE(sys.node() != caf::node_id{});
  std::mt19937_64 rng(env_number("AM_FUZZ_SEED", 0xf4a3e));
  auto iterations = 3000 * env_number("AM_FUZZ_ITERATIONS", 1);
  auto serialize = [&](auto&&... xs) {
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    REQUIRE(!sink(xs...));
    return std::string(buf.begin(), buf.end());
  };
  std::vector<caf::strong_actor_ptr> stages;
  const std::string seeds[] = {serialize(other.node()), serialize(other.node(), sys.node(), stages),
                               serialize(sys.node(), other.node(), stages), std::string(40, '\xff'), std::string()};
  for (std::uint64_t i = 0; i < iterations; ++i) {
    auto bindings = std::make_shared<guard::node_bindings>();
    guard::frame_check check(guard::frame_check::peer::member, 4096, sys.node(), bindings);
    std::string why;
    for (int frame = 0; frame < 6 && why.empty(); ++frame) {
      auto op = static_cast<message_type>(frame == 0 && rng() % 3 ? 1 : rng() % 8);
      auto body = seeds[rng() % std::size(seeds)];
      if (rng() % 2)
        mutate(body, rng);
      auto claimed = static_cast<std::uint32_t>(rng() % 5 == 0 ? rng() : body.size());
      caf::io::basp::header hdr{op, static_cast<std::uint8_t>(rng() % 4), claimed, rng(), rng(), rng()};
      auto header = serialize(hdr);
      if (rng() % 5 == 0)
        mutate(header, rng);
      why = check.next(header.data(), header.size());
      if (!why.empty() || check.expects_header())
        continue;
      body.resize(claimed <= 4096 ? claimed : 0); // CAF reads exactly what the header claimed
      why = check.next(body.data(), body.size());
    }
    // Whatever passed, the connection speaks for one node at most, never this process's own.
    CHECK(check.bound_node() != sys.node());
  }
}
