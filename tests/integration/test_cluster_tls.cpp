// Mutual TLS between cluster processes: real processes on loopback, certificates
// made with the openssl command line for each run (tests/support/tls_certificates.hpp). Processes
// with certificates from the cluster's CA join, meet at barriers and use the store; every intruder
// (a plain actormesh process, a certificate from another CA, no certificate, CAF's anonymous TLS,
// raw bytes) is refused, fails with a clear error within its join timeout and never reaches an
// actor: each claims the slot of process 1 in a 2-process cluster whose real process 1 joins
// afterwards, and the cluster still forms with the real one and keeps serving. A cluster that is
// already running must keep its members while intruders are refused (see that case's note).
#include "support/build_paths.hpp"
#include "support/process_group.hpp"
#include "support/tls_certificates.hpp"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using am::testing::cluster_env;
using am::testing::process_group;
using am::testing::tls_certificates;
using env_map = std::map<std::string, std::string>;
using steady = std::chrono::steady_clock;

std::string program(const std::string& name) {
  return am::testing::test_program_dir() + "/" + name;
}

env_map with(env_map base, const env_map& more) {
  for (auto& [k, v] : more)
    base[k] = v;
  return base;
}

/// Exits with ctest's skip code (4) when the openssl command line is missing.
void require_openssl() {
  if (am::testing::openssl_available())
    return;
  std::printf("SKIPPED: the openssl command line tool is not installed (the test makes its certificates with it)\n");
  std::fflush(stdout);
  std::_Exit(4);
}

/// Whether something listens on 127.0.0.1:`port` (read from /proc/net/tcp: no connection is made).
bool listening_on(int port) {
  std::ifstream in("/proc/net/tcp");
  char want[32];
  std::snprintf(want, sizeof want, ":%04X", port);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if (state == "0A" && local.size() > 5 && local.substr(local.size() - 5) == want)
      return true;
  }
  return false;
}

bool wait_listening(int port, std::chrono::milliseconds timeout) {
  auto deadline = steady::now() + timeout;
  while (!listening_on(port)) {
    if (steady::now() > deadline)
      return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

/// Waits until member `k` printed `text` (or ended, or `timeout` passed); returns whether it did.
bool wait_for_output(process_group& group, std::size_t k, const std::string& text, std::chrono::milliseconds timeout) {
  auto deadline = steady::now() + timeout;
  while (group[k].output().find(text) == std::string::npos) {
    if (steady::now() > deadline || group.wait(0ms, {k}))
      return group[k].output().find(text) != std::string::npos;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

/// A TCP connection to 127.0.0.1:`port` made by the test itself (close-on-exec: a process the test
/// starts meanwhile must not hold it open).
class raw_connection {
public:
  explicit raw_connection(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;
  ~raw_connection() { ::close(fd_); }

  bool connected() const { return connected_; }

  /// Writes `bytes` (as much as the peer takes); returns how many went out.
  std::size_t send(const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      auto n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0)
        break;
      sent += static_cast<std::size_t>(n);
    }
    return sent;
  }

  /// Reads until the peer closes the connection (true) or `timeout` passes (false); what it read
  /// goes to `received`.
  bool closed_by_peer(std::chrono::milliseconds timeout, std::string& received) {
    auto deadline = steady::now() + timeout;
    while (steady::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
      if (::poll(&p, 1, static_cast<int>(std::max<long long>(left.count(), 1))) <= 0)
        continue;
      char buf[4096];
      auto n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0)
        return true; // orderly close or reset
      received.append(buf, static_cast<std::size_t>(n));
    }
    return false;
  }

private:
  int fd_;
  bool connected_ = false;
};

/// Garbage of several kinds: pseudo-random bytes, a plain-text BASP-like header claiming a huge
/// payload, an HTTP request and 1 MiB of 0xff; each on its own connection, which the coordinator
/// must close.
void send_garbage_and_expect_close(int port) {
  std::string random(4096, '\0');
  unsigned seed = 4242;
  for (auto& c : random)
    c = static_cast<char>((seed = seed * 1103515245u + 12345u) >> 16);
  std::string header(64, '\xff');
  std::string http = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  std::string ff(1 << 20, '\xff');
  for (auto* bytes : {&random, &header, &http, &ff}) {
    raw_connection c(port);
    REQUIRE(c.connected());
    c.send(*bytes);
    std::string received;
    INFO("garbage of " << bytes->size() << " bytes");
    CHECK(c.closed_by_peer(5s, received));
  }
}

/// One intruder: how to start it and what it must say.
struct intruder {
  std::string what;
  std::vector<std::string> argv;
  env_map env;
  bool refused_by_caf_at_start = false; ///< CAF refuses the configuration before connecting
};

/// Intruders, each claiming process 1 of 2 on `port` with a join timeout of `timeout_ms`.
std::vector<intruder> intruders(const tls_certificates& certs, int port, int timeout_ms) {
  auto base = cluster_env(1, 2, port, 1);
  base["AM_JOIN_TIMEOUT"] = std::to_string(timeout_ms) + "ms";
  auto probe = std::vector<std::string>{program("cluster_probe"), "join"};
  auto ms = std::to_string(timeout_ms);
  auto rogue_trusting_us = certs.rogue(certs.ca_file());
  return {
    {"a plain (non-TLS) actormesh process", probe, base},
    {"a certificate from another CA (trusting that CA only)", probe, with(base, certs.rogue().env())},
    {"a certificate from another CA (trusting the cluster's CA)", probe, with(base, rogue_trusting_us.env())},
    {"no certificate, trusting the cluster's CA", {program("tls_intruder"), "-", "-", certs.ca_file(), ms}, base, true},
    {"no certificate and no CA (CAF's anonymous TLS)", {program("tls_intruder"), "-", "-", "-", ms}, base},
  };
}

/// Starts every intruder at once, waits for all of them (bounded) and checks each was refused with
/// a connection error within its join timeout.
void run_intruders(const tls_certificates& certs, int port, int timeout_ms) {
  auto list = intruders(certs, port, timeout_ms);
  process_group group;
  auto start = steady::now();
  for (auto& i : list)
    group.start(i.argv, i.env);
  bool ended = group.wait(std::chrono::milliseconds(timeout_ms) + 15s);
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start);
  INFO(group.all_output());
  REQUIRE(ended);
  for (std::size_t k = 0; k < list.size(); ++k) {
    INFO("intruder: " << list[k].what);
    auto out = group[k].output();
    CHECK(group[k].signal == 0);
    CHECK(group[k].status != 0);
    CHECK(out.find("unexpected") == std::string::npos);
    if (list[k].refused_by_caf_at_start) {
      // CAF's OpenSSL manager will not start with a CA file but no certificate.
      CHECK(out.find("No certificate configured for SSL endpoint") != std::string::npos);
      continue;
    }
    CHECK(out.find("could not reach the coordinator") != std::string::npos);
    CHECK(out.find("(the join timeout)") != std::string::npos);
    // The coordinator closes the connection during the handshake (the join keeps that reason
    // when the deadline cuts its last attempt short), and the error says what that likely means.
    CHECK(out.find("disconnect_during_handshake") != std::string::npos);
    CHECK(out.find("the connection was closed during the handshake") != std::string::npos);
    CHECK(out.find("devices:") == std::string::npos);
    CHECK(out.find("barrier passed") == std::string::npos);
  }
  // Each gave up at its join timeout, not later (the slack covers starting 5 processes on 2 cores).
  CHECK(elapsed < std::chrono::milliseconds(timeout_ms) + 12s);
}

/// A 2-process TLS cluster of `cluster_hold` members, which hold it open until go() (then use the
/// store and a barrier, and exit).
class held_cluster {
public:
  held_cluster(const tls_certificates& certs, int port) : certs_(certs), port_(port) {
    char tmpl[] = "/tmp/am_tls_go_XXXXXX";
    if (!::mkdtemp(tmpl))
      throw std::runtime_error("cannot create a temporary folder");
    dir_ = tmpl;
  }
  held_cluster(const held_cluster&) = delete;
  held_cluster& operator=(const held_cluster&) = delete;
  ~held_cluster() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  /// Starts member `id`, with a join timeout that outlasts the intruders coming before the other.
  void start(int id) {
    auto env = with(cluster_env(id, 2, port_), certs_.node(id).env());
    env["AM_JOIN_TIMEOUT"] = "60s";
    group.start({program("cluster_hold"), dir_ + "/go"}, env);
  }

  /// Waits until both members formed the cluster; checks it holds their devices and nobody else's.
  void require_formed() {
    for (std::size_t k = 0; k < 2; ++k) {
      INFO(group.all_output());
      REQUIRE(wait_for_output(group, k, "formed", 30s));
    }
    INFO(group.all_output());
    auto out0 = group[0].output();
    auto out1 = group[1].output();
    auto at0 = out0.find("devices:");
    auto at1 = out1.find("devices:");
    REQUIRE(at0 != std::string::npos);
    REQUIRE(at1 != std::string::npos);
    auto line = out0.substr(at0, out0.find('\n', at0) - at0);
    CHECK(line == out1.substr(at1, out1.find('\n', at1) - at1));
    CHECK(line.find("@1") != std::string::npos); // two processes' devices: process 0's and the real 1's
    CHECK(line.find("@2") == std::string::npos);
  }

  /// Lets the members go on: they use the store and a barrier, print "still serving" and exit.
  void go() { std::ofstream touch(dir_ + "/go"); }

  /// Checks the store and the barrier worked after go() and both members exited cleanly.
  void require_served() {
    bool ended = group.wait(30s);
    INFO(group.all_output());
    REQUIRE(ended);
    for (std::size_t k = 0; k < 2; ++k) {
      auto out = group[k].output();
      CHECK(group[k].status == 0);
      CHECK(out.find("value: still here") != std::string::npos);
      CHECK(out.find("still serving") != std::string::npos);
    }
  }

  process_group group;

private:
  const tls_certificates& certs_;
  int port_;
  std::string dir_;
};

constexpr int intruder_timeout_ms = 4000;

} // namespace

TEST_CASE("three processes with certificates from the cluster's CA join over mutual TLS", "[integration][cluster][tls]") {
  require_openssl();
  tls_certificates certs(3);
  for (std::string scenario : {"join", "kv"}) {
    DYNAMIC_SECTION(scenario) {
      int port = am::testing::free_loopback_port();
      process_group group;
      for (int id = 0; id < 3; ++id)
        group.start({program("cluster_probe"), scenario}, with(cluster_env(id, 3, port), certs.node(id).env()));
      bool ended = group.wait(60s);
      INFO(group.all_output());
      REQUIRE(ended);
      std::string first_devices;
      for (std::size_t k = 0; k < 3; ++k) {
        auto out = group[k].output();
        CHECK(group[k].status == 0);
        CHECK(out.find("process " + std::to_string(k) + " of 3") != std::string::npos);
        if (scenario == "join") {
          CHECK(out.find("barrier passed") != std::string::npos);
          auto at = out.find("devices:");
          REQUIRE(at != std::string::npos);
          auto line = out.substr(at, out.find('\n', at) - at);
          CHECK(line.find("@2") != std::string::npos);
          if (k == 0)
            first_devices = line;
          CHECK(line == first_devices);
        } else {
          CHECK(out.find("value: hello from 0") != std::string::npos);
        }
      }
    }
  }
}


TEST_CASE("intruders without a certificate of the cluster's CA are refused and never take a process slot", "[integration][cluster][tls]") {
  require_openssl();
  tls_certificates certs(2);
  int port = am::testing::free_loopback_port();
  held_cluster cluster(certs, port);
  cluster.start(0);
  {
    INFO(cluster.group.all_output());
    REQUIRE(wait_listening(port, 20s));
  }

  // Before the real process 1 exists: every intruder claims its slot, and a silent TCP connection
  // stays open while they try and while the real process 1 joins (it must not hold up the
  // coordinator's other connections).
  auto silent = std::make_unique<raw_connection>(port);
  REQUIRE(silent->connected());
  run_intruders(certs, port, intruder_timeout_ms);
  send_garbage_and_expect_close(port);

  // The real process 1 joins: the slot was never taken.
  cluster.start(1);
  cluster.require_formed();

  // The cluster serves (store, barrier) with the silent connection still open. CAF 0.17.6's OpenSSL
  // module never times out a connection that sends nothing: its pending handshake keeps the
  // coordinator's I/O thread busy (a full core) and holds its exit until the peer closes
  // (doc/multihost_security.md). Closing it is a failed handshake too, which a running cluster
  // does not survive yet (the next case): close it once the members are done.
  cluster.go();
  for (std::size_t k = 0; k < 2; ++k) {
    INFO(cluster.group.all_output());
    CHECK(wait_for_output(cluster.group, k, "still serving", 30s));
  }
  silent.reset();
  cluster.require_served();
}

// Failed with Debian's CAF 0.17.6 before actormesh cleared OpenSSL's error queue itself
// (cluster/openssl_error_queue.cpp): CAF's OpenSSL session never clears it, so the error a
// refused handshake leaves on the coordinator's I/O thread made the next SSL_read of a member's
// healthy connection that has to wait for data look fatal, and CAF dropped that member
// (doc/multihost_security.md, "Pitfalls"). One garbage connection was enough.
TEST_CASE("a running TLS cluster keeps its members while intruders are refused", "[integration][cluster][tls]") {
  require_openssl();
  tls_certificates certs(2);
  int port = am::testing::free_loopback_port();
  held_cluster cluster(certs, port);
  cluster.start(0);
  cluster.start(1);
  cluster.require_formed();
  // While the cluster runs (its members exchange heartbeats): garbage, then every intruder.
  send_garbage_and_expect_close(port);
  run_intruders(certs, port, intruder_timeout_ms);
  cluster.go();
  cluster.require_served();
}

TEST_CASE("TLS needs the certificate, its key and the CA file together", "[integration][cluster][tls]") {
  int port = am::testing::free_loopback_port();
  process_group group;
  group.start({program("cluster_probe"), "join"},
              with(cluster_env(0, 1, port), {{"AM_TLS_CA", "/nonexistent/ca.pem"}}));
  bool ended = group.wait(20s);
  INFO(group.all_output());
  REQUIRE(ended);
  CHECK(group[0].status != 0);
  CHECK(group[0].output().find("mutual TLS needs a certificate, its key and a CA file together") != std::string::npos);
}

TEST_CASE("a TLS file that cannot be used is a clear error at start, not an abort", "[integration][cluster][tls]") {
  require_openssl();
  tls_certificates certs(1);
  auto node = certs.node(0);
  struct bad_files {
    std::string what;
    am::testing::tls_identity files;
    std::string expected;
  };
  std::vector<bad_files> cases = {
    {"a missing certificate", {certs.folder() + "/missing.pem", node.key, node.ca},
     "the certificate file '" + certs.folder() + "/missing.pem' (AM_TLS_CERTIFICATE, --am-tls-certificate) cannot be read"},
    {"a key file given as the certificate", {node.key, node.key, node.ca}, "holds no PEM certificate"},
    {"a certificate given as the key", {node.certificate, node.certificate, node.ca}, "holds no PEM private key"},
    {"a key file given as the CA", {node.certificate, node.key, node.key}, "holds no PEM CA certificate"},
  };
  for (auto& c : cases) {
    INFO(c.what);
    int port = am::testing::free_loopback_port();
    process_group group;
    for (int id = 0; id < 2; ++id)
      group.start({program("cluster_probe"), "join"}, with(cluster_env(id, 2, port), c.files.env()));
    bool ended = group.wait(30s);
    INFO(group.all_output());
    REQUIRE(ended);
    for (std::size_t k = 0; k < 2; ++k) {
      CHECK(group[k].signal == 0);
      CHECK(group[k].status == 2);
      CHECK(group[k].output().find("error value_error: mutual TLS: ") != std::string::npos);
      CHECK(group[k].output().find(c.expected) != std::string::npos);
    }
  }
}

TEST_CASE("a TLS process cannot join a plain coordinator, which keeps its slot for the real one", "[integration][cluster][tls]") {
  require_openssl();
  tls_certificates certs(2);
  int port = am::testing::free_loopback_port();
  process_group group;
  group.start({program("cluster_probe"), "join"}, cluster_env(0, 2, port));
  REQUIRE(wait_listening(port, 20s));
  auto tls_env = with(cluster_env(1, 2, port), certs.node(1).env());
  tls_env["AM_JOIN_TIMEOUT"] = "3s";
  auto tls_process = group.start({program("cluster_probe"), "join"}, tls_env);
  {
    bool ended = group.wait(20s, {tls_process});
    INFO(group.all_output());
    REQUIRE(ended);
    auto out = group[tls_process].output();
    CHECK(group[tls_process].status == 2);
    CHECK(out.find("could not reach the coordinator") != std::string::npos);
    CHECK(out.find("the coordinator may not use TLS") != std::string::npos);
  }
  auto real = group.start({program("cluster_probe"), "join"}, cluster_env(1, 2, port));
  bool ended = group.wait(30s, {0, real});
  INFO(group.all_output());
  REQUIRE(ended);
  for (std::size_t k : {std::size_t{0}, real}) {
    CHECK(group[k].status == 0);
    CHECK(group[k].output().find("barrier passed") != std::string::npos);
  }
}

TEST_CASE("actor mesh calls between processes go over mutual TLS too", "[integration][cluster][tls][actor_mesh]") {
  require_openssl();
  tls_certificates certs(3);
  int port = am::testing::free_loopback_port();
  process_group group;
  for (int id = 0; id < 3; ++id)
    group.start({program("actor_mesh_probe"), "calls"}, with(cluster_env(id, 3, port), certs.node(id).env()));
  bool ended = group.wait(90s);
  INFO(group.all_output());
  REQUIRE(ended);
  for (std::size_t k = 0; k < 3; ++k) {
    auto out = group[k].output();
    CHECK(group[k].status == 0);
    CHECK(out.find("FAIL") == std::string::npos);
    CHECK(out.find("ok each thread's calls arrive in order across processes") != std::string::npos);
    CHECK(out.find("all checks done") != std::string::npos);
  }
}
