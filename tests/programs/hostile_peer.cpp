// A hostile peer of a running cluster, for tests/integration/test_cluster_guard.cpp. It speaks to
// the coordinator's port the way an attacker would, with CAF's own serializer for the frames:
//
//   hostile_peer forge PORT TOKEN VICTIM_NODE_HEX VICTIM_CLIENT_ID
//       passes the guard with TOKEN (an insider who holds the secret), completes CAF's handshake
//       as a node of its own, then sends a routed message that claims to come from the victim's
//       node and client actor: "process 1 leaves", as the victim itself would send it.
//   hostile_peer hijack PORT TOKEN VICTIM_NODE_HEX
//       passes the guard, then sends a client handshake naming the victim's node (CAF would route
//       the victim's traffic to this connection).
//   hostile_peer oversized PORT TOKEN COUNT
//       COUNT connections pass the guard and send one frame header claiming 2 GiB.
//   hostile_peer flood PORT COUNT SECONDS
//       opens COUNT bare connections (nothing sent) and holds them for SECONDS.
//   hostile_peer stranger PORT
//       a handshake without the secret.
//   hostile_peer data-plane PORT[,PORT...] FLAG HOLD_SECONDS
//       at each of a forming communicator's pair listeners: a bare connect that stays silent,
//       junk, the guard's handshake with another secret, and a flood of 40 bare connects; then
//       creates FLAG (the members go on) and holds every connection HOLD_SECONDS.
//
// Each prints what the coordinator did ("closed by the coordinator: yes/no" and counts). Bounded:
// every wait is at most a few seconds.
#include "cluster/cluster_messages.hpp"
#include "cluster/guard/guard_protocol.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/io/basp/header.hpp>
#include <caf/io/basp/message_type.hpp>
#include <caf/io/middleman.hpp>
#include <caf/make_message.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <set>
#include <thread>
#include <vector>

namespace {

using caf::io::basp::message_type;
namespace guard = am::detail::guard;

int connect_to(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0)
      ::close(fd);
    return -1;
  }
  timeval tv{3, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

bool send_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0)
      return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool receive(int fd, std::size_t n, std::string& out) {
  out.clear();
  char buf[4096];
  while (out.size() < n) {
    auto got = ::recv(fd, buf, std::min(sizeof buf, n - out.size()), 0);
    if (got <= 0)
      return false;
    out.append(buf, static_cast<std::size_t>(got));
  }
  return true;
}

/// True when the coordinator closes `fd` within `seconds` (a read returns end of file or an error).
bool closed_within(int fd, int seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  char buf[4096];
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 200) > 0) {
      auto n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
        return true;
    }
  }
  return false;
}

/// The guard's handshake as a process with `token`; true when let in.
bool pass_guard(int fd, const std::string& token) {
  guard::hello h{!token.empty(), am::detail::random_bytes(guard::nonce_size)};
  std::string bytes;
  if (!send_all(fd, guard::encode(h)) || !receive(fd, guard::answer_size, bytes))
    return false;
  auto a = guard::decode_answer(bytes);
  if (!a || a->verdict != guard::verdict::go_on)
    return false;
  auto proof = guard::client_proof(token, h.nonce, a->nonce);
  if (!send_all(fd, std::string(reinterpret_cast<const char*>(proof.data()), proof.size())) || !receive(fd, 1, bytes))
    return false;
  return bytes[0] == '\0';
}

/// A BASP frame: the header with the payload's length, then the payload.
std::string frame(caf::actor_system& sys, message_type op, std::uint8_t flags, std::uint64_t op_data,
                  caf::actor_id source, caf::actor_id dest, const std::vector<char>& payload) {
  caf::io::basp::header hdr{op, flags, static_cast<std::uint32_t>(payload.size()), op_data, source, dest};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  if (sink(hdr))
    std::abort();
  std::string out(buf.begin(), buf.end());
  out.append(payload.begin(), payload.end());
  return out;
}

caf::node_id node_from_hex(const std::string& hex) {
  std::vector<char> bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  caf::node_id node;
  caf::binary_deserializer source{nullptr, bytes};
  if (source(node))
    std::abort();
  return node;
}

/// Reads the coordinator's server handshake: its node and the published actor's id.
bool read_server_handshake(int fd, caf::node_id& node, caf::actor_id& published) {
  std::string bytes;
  if (!receive(fd, caf::io::basp::header_size, bytes))
    return false;
  caf::io::basp::header hdr;
  caf::binary_deserializer h{nullptr, bytes.data(), bytes.size()};
  if (h(hdr) || hdr.operation != message_type::server_handshake || !receive(fd, hdr.payload_len, bytes))
    return false;
  std::vector<std::string> app_ids;
  std::set<std::string> sigs;
  caf::binary_deserializer p{nullptr, bytes.data(), bytes.size()};
  return !p(node, app_ids, published, sigs);
}

std::string client_handshake(caf::actor_system& sys, const caf::node_id& as, std::uint8_t flags = 0) {
  std::vector<char> payload;
  caf::binary_serializer sink{sys, payload};
  if (sink(as))
    std::abort();
  return frame(sys, message_type::client_handshake, flags, 0, 0, 0, payload);
}

int forge(caf::actor_system& sys, int port, const std::string& token, const std::string& victim_hex,
          caf::actor_id victim_client) {
  int fd = connect_to(port);
  if (fd < 0 || !pass_guard(fd, token)) {
    std::puts("guard passed: no");
    return 1;
  }
  std::puts("guard passed: yes");
  caf::node_id coordinator;
  caf::actor_id supervisor = 0;
  if (!read_server_handshake(fd, coordinator, supervisor)) {
    std::puts("server handshake: no");
    return 1;
  }
  auto victim = node_from_hex(victim_hex);
  // Handshake as this process's own node, as any member would.
  send_all(fd, client_handshake(sys, sys.node()));
  // Then "process 1 leaves", claiming the victim's node and client actor as its source.
  std::vector<char> payload;
  caf::binary_serializer sink{sys, payload};
  std::vector<caf::strong_actor_ptr> stages;
  auto msg = caf::make_message(am::detail::leave_atom::value, std::int32_t{1}, std::uint64_t{77});
  if (sink(victim, coordinator, stages, msg))
    std::abort();
  bool sent = send_all(fd, frame(sys, message_type::routed_message, 0, 0, victim_client, supervisor, payload));
  std::printf("forged leave sent: %s\n", sent ? "yes" : "no");
  std::printf("closed by the coordinator: %s\n", closed_within(fd, 4) ? "yes" : "no");
  ::close(fd);
  return 0;
}

int hijack(caf::actor_system& sys, int port, const std::string& token, const std::string& victim_hex) {
  int fd = connect_to(port);
  if (fd < 0 || !pass_guard(fd, token))
    return 1;
  caf::node_id coordinator;
  caf::actor_id supervisor = 0;
  if (!read_server_handshake(fd, coordinator, supervisor))
    return 1;
  // With the select-connection flag, CAF 0.17 would make this connection the route to the victim.
  send_all(fd, client_handshake(sys, node_from_hex(victim_hex), caf::io::basp::header::select_connection_flag));
  std::printf("closed by the coordinator: %s\n", closed_within(fd, 4) ? "yes" : "no");
  ::close(fd);
  return 0;
}

int oversized(caf::actor_system& sys, int port, const std::string& token, int count) {
  int closed = 0;
  std::vector<int> fds;
  for (int k = 0; k < count; ++k) {
    int fd = connect_to(port);
    if (fd < 0 || !pass_guard(fd, token))
      continue;
    caf::node_id coordinator;
    caf::actor_id supervisor = 0;
    read_server_handshake(fd, coordinator, supervisor);
    caf::io::basp::header hdr{message_type::client_handshake, 0, 0x7fffffffu, 0, 0, 0};
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    if (sink(hdr))
      std::abort();
    send_all(fd, std::string(buf.begin(), buf.end()));
    fds.push_back(fd);
  }
  for (int fd : fds) {
    closed += closed_within(fd, 4) ? 1 : 0;
    ::close(fd);
  }
  std::printf("oversized headers sent: %zu, closed by the coordinator: %d\n", fds.size(), closed);
  return 0;
}

int flood(int port, int count, int seconds) {
  std::vector<int> fds;
  for (int k = 0; k < count; ++k) {
    int fd = connect_to(port);
    if (fd >= 0)
      fds.push_back(fd);
  }
  std::printf("connections opened: %zu\n", fds.size());
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  int closed = 0;
  for (int fd : fds) {
    char c;
    auto n = ::recv(fd, &c, 1, MSG_DONTWAIT);
    closed += (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) ? 1 : 0;
    ::close(fd);
  }
  std::printf("closed by the coordinator: %d\n", closed);
  return 0;
}

int stranger(int port) {
  int fd = connect_to(port);
  bool in = fd >= 0 && pass_guard(fd, "");
  std::printf("let in without the secret: %s\n", in ? "yes" : "no");
  if (fd >= 0)
    ::close(fd);
  return 0;
}

/// True when the peer has closed `fd` (a read returns end of file or an error; nothing waits).
bool closed_now(int fd) {
  char c;
  auto n = ::recv(fd, &c, 1, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

int data_plane(const std::string& ports, const std::string& flag, int hold_seconds) {
  std::vector<int> bare, junk, flood_fds;
  int wrong_let_in = 0, wrong_tried = 0;
  for (std::size_t at = 0; at < ports.size();) {
    auto comma = ports.find(',', at);
    const int port = std::atoi(ports.substr(at, comma - at).c_str());
    at = comma == std::string::npos ? ports.size() : comma + 1;
    bare.push_back(connect_to(port));
    int j = connect_to(port);
    std::string noise(4096, '\0');
    unsigned seed = static_cast<unsigned>(port);
    for (auto& c : noise)
      c = static_cast<char>((seed = seed * 1103515245u + 12345u) >> 16);
    (void)send_all(j, noise);
    junk.push_back(j);
    int w = connect_to(port);
    ++wrong_tried;
    wrong_let_in += pass_guard(w, "another cluster's secret") ? 1 : 0;
    ::close(w);
    for (int k = 0; k < 40; ++k)
      flood_fds.push_back(connect_to(port));
  }
  std::printf("attack connections in place\n");
  std::fflush(stdout);
  { std::FILE* f = std::fopen(flag.c_str(), "w"); if (f) std::fclose(f); }
  std::this_thread::sleep_for(std::chrono::seconds(hold_seconds));
  auto count_closed = [](const std::vector<int>& fds) {
    int closed = 0;
    for (int fd : fds) {
      closed += fd < 0 || closed_now(fd) ? 1 : 0;
      if (fd >= 0)
        ::close(fd);
    }
    return closed;
  };
  std::printf("wrong secret let in: %d of %d\n", wrong_let_in, wrong_tried);
  const int junk_closed = count_closed(junk);
  const int bare_closed = count_closed(bare);
  const int flood_closed = count_closed(flood_fds);
  std::printf("junk closed: %d of %zu\nbare closed: %d of %zu\nflood closed: %d of %zu\n", junk_closed, junk.size(),
              bare_closed, bare.size(), flood_closed, flood_fds.size());
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: hostile_peer forge|hijack|oversized|flood|stranger|data-plane PORT ...\n");
    return 2;
  }
  std::string mode = argv[1];
  if (mode == "data-plane" && argc == 5)
    return data_plane(argv[2], argv[3], std::atoi(argv[4]));
  int port = std::atoi(argv[2]);
  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>(); // a node id of its own (CAF 0.17 gives none without it)
  caf::actor_system sys{cfg};
  if (mode == "forge" && argc == 6)
    return forge(sys, port, argv[3], argv[4], static_cast<caf::actor_id>(std::strtoull(argv[5], nullptr, 10)));
  if (mode == "hijack" && argc == 5)
    return hijack(sys, port, argv[3], argv[4]);
  if (mode == "oversized" && argc == 5)
    return oversized(sys, port, argv[3], std::atoi(argv[4]));
  if (mode == "flood" && argc == 5)
    return flood(port, std::atoi(argv[3]), std::atoi(argv[4]));
  if (mode == "stranger" && argc == 3)
    return stranger(port);
  std::fprintf(stderr, "hostile_peer: bad arguments for %s\n", mode.c_str());
  return 2;
}
