// The coordinator's guard against hostile peers, with real processes on loopback: a 3-process
// cluster with a secret runs tests/programs/cluster_probe.cpp "under-attack" while
// tests/programs/hostile_peer.cpp attacks its port as an insider who holds the secret (a forged
// "process 1 leaves", a take-over of process 1's node, headers that claim 2 GiB) or as a stranger
// (a flood of idle connections, no secret). Each case checks that the attacker was cut off, that
// every member still passes a barrier and uses the store afterwards, and what the coordinator logged.
// Then: a wrong secret, no secret, and listening beyond loopback without one.
#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/process_group.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <thread>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
using am::testing::cluster_env;
using am::testing::free_loopback_port;
using am::testing::process_group;

const std::string probe = am::testing::test_program_dir() + "/cluster_probe";
const std::string hostile = am::testing::test_program_dir() + "/hostile_peer";
const std::string secret = "test-secret-0123456789";

/// The first group of `pattern` in what `p` has printed, waiting for it at most `limit`; "" if none.
std::string first_match(const am::testing::member_process& p, const std::regex& pattern, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (true) {
    std::smatch m;
    const auto out = p.output();
    if (std::regex_search(out, m, pattern))
      return m[1];
    if (std::chrono::steady_clock::now() >= until)
      return "";
    std::this_thread::sleep_for(50ms);
  }
}

/// A cluster of three under attack: `attack` gets the port and process 1's "NODE CLIENT" identity
/// and returns the hostile peer's output; then the members go on.
struct attacked_cluster {
  process_group group;
  int port = free_loopback_port();
  std::string flag = "/tmp/am_guard_flag_" + std::to_string(::getpid()) + "_" + std::to_string(port);
  std::string identity;

  attacked_cluster() {
    ::unlink(flag.c_str());
    for (int p = 0; p < 3; ++p) {
      auto env = cluster_env(p, 3, port);
      env["AM_CLUSTER_TOKEN"] = secret;
      if (p == 0)
        env["AM_LOG"] = "warning"; // the guard's refusals
      group.start({probe, "under-attack", flag}, env);
    }
    identity = first_match(group[1], std::regex("identity: ([0-9a-f]+ [0-9]+)"), 20s);
  }
  ~attacked_cluster() { ::unlink(flag.c_str()); }

  /// Lets the members go on and checks that every one still serves.
  void expect_still_serving() {
    std::ofstream(flag) << "go";
    REQUIRE(group.wait(60s));
    INFO(group.all_output());
    for (std::size_t p = 0; p < 3; ++p) {
      CHECK(group[p].status == 0);
      CHECK(group[p].output().find("value: served") != std::string::npos);
      CHECK(group[p].output().find("still serving") != std::string::npos);
    }
  }
};

std::string run_hostile(const std::string& args) {
  auto r = am::testing::run_command(hostile + " " + args, 60);
  return r.output;
}

} // namespace

TEST_CASE("a member cannot speak for another: a forged 'process 1 leaves' is dropped with its sender",
          "[integration][cluster][guard]") {
  attacked_cluster c;
  REQUIRE(!c.identity.empty());
  auto out = run_hostile("forge " + std::to_string(c.port) + " " + secret + " " + c.identity);
  INFO(out);
  CHECK(out.find("guard passed: yes") != std::string::npos);
  CHECK(out.find("forged leave sent: yes") != std::string::npos);
  CHECK(out.find("closed by the coordinator: yes") != std::string::npos);
  c.expect_still_serving();
  INFO(c.group[0].output());
  CHECK(c.group[0].output().find("claiming to come from node") != std::string::npos);
}

TEST_CASE("a connection cannot take over a member's node", "[integration][cluster][guard]") {
  attacked_cluster c;
  REQUIRE(!c.identity.empty());
  auto out = run_hostile("hijack " + std::to_string(c.port) + " " + secret + " " + c.identity.substr(0, c.identity.find(' ')));
  INFO(out);
  CHECK(out.find("closed by the coordinator: yes") != std::string::npos);
  c.expect_still_serving();
  CHECK(c.group[0].output().find("which another connection holds") != std::string::npos);
}

TEST_CASE("frame headers that claim 2 GiB cost the coordinator nothing", "[integration][cluster][guard]") {
  attacked_cluster c;
  REQUIRE(!c.identity.empty());
  auto out = run_hostile("oversized " + std::to_string(c.port) + " " + secret + " 3");
  INFO(out);
  CHECK(out.find("oversized headers sent: 3, closed by the coordinator: 3") != std::string::npos);
  c.expect_still_serving();
  // Without the guard CAF allocated and zeroed each claim: 6 GiB here.
  std::smatch m;
  auto coordinator = c.group[0].output();
  REQUIRE(std::regex_search(coordinator, m, std::regex("coordinator peak rss kb: ([0-9]+)")));
  CHECK(std::stol(m[1]) < 1024 * 1024);
  CHECK(coordinator.find("over the limit") != std::string::npos);
}

TEST_CASE("a flood of idle connections is bounded and the members keep working", "[integration][cluster][guard]") {
  attacked_cluster c;
  REQUIRE(!c.identity.empty());
  // More than the coordinator's descriptor limit (ulimit -n, usually 1024) if it kept them all.
  auto out = run_hostile("flood " + std::to_string(c.port) + " 1100 7");
  INFO(out);
  std::smatch m;
  REQUIRE(std::regex_search(out, m, std::regex("connections opened: ([0-9]+)")));
  auto opened = m[1].str();
  CHECK(std::stol(opened) > 500);
  // Each is closed: at once beyond the handshake limits, after the handshake's deadline otherwise.
  CHECK(out.find("closed by the coordinator: " + opened) != std::string::npos);
  c.expect_still_serving();
}

TEST_CASE("a process without the cluster's secret, or with another, is not let in", "[integration][cluster][guard]") {
  attacked_cluster c;
  REQUIRE(!c.identity.empty());
  auto out = run_hostile("stranger " + std::to_string(c.port));
  CHECK(out.find("let in without the secret: no") != std::string::npos);
  // A real process with the wrong secret, and one with none, claiming a slot of this cluster.
  for (const char* token : {"another-secret", ""}) {
    auto env = cluster_env(2, 3, c.port);
    env["AM_CLUSTER_TOKEN"] = token;
    process_group intruder;
    intruder.start({probe, "join"}, env);
    REQUIRE(intruder.wait(30s));
    INFO(intruder.all_output());
    CHECK(intruder[0].status != 0);
    auto said = intruder[0].output();
    CHECK(said.find("cannot join the cluster at 127.0.0.1:" + std::to_string(c.port)) != std::string::npos);
    CHECK(said.find(*token ? "AM_CLUSTER_TOKEN differs" : "requires the cluster's secret and this process has none")
          != std::string::npos);
  }
  c.expect_still_serving();
}

TEST_CASE("process 0 refuses to listen beyond loopback without a secret or TLS", "[integration][cluster][guard]") {
  auto env = cluster_env(0, 2, free_loopback_port());
  env["AM_LISTEN_ADDRESS"] = "0.0.0.0";
  process_group group;
  group.start({probe, "join"}, env);
  REQUIRE(group.wait(30s));
  INFO(group.all_output());
  CHECK(group[0].status != 0);
  CHECK(group[0].output().find("will not listen on 0.0.0.0 (beyond loopback) without the cluster's secret or TLS")
        != std::string::npos);
}

TEST_CASE("a stranger's connects and junk at a forming communicator's listeners are dropped and the real peers connect",
          "[integration][cluster][guard]") {
  // Gloo's own pair took the first connection to its listener as its peer: a bare connect there
  // stalled the communicator's creation on every process until its timeout.
  const int port = free_loopback_port();
  const std::string flag = "/tmp/am_data_plane_flag_" + std::to_string(::getpid()) + "_" + std::to_string(port);
  ::unlink(flag.c_str());
  process_group group;
  for (int p = 0; p < 3; ++p) {
    auto env = cluster_env(p, 3, port);
    env["AM_CLUSTER_TOKEN"] = secret;
    group.start({probe, "data-plane", flag}, env);
  }
  const std::string ports = first_match(group[0], std::regex("pair ports: ([0-9,]+)"), 30s);
  INFO(group.all_output());
  REQUIRE(std::count(ports.begin(), ports.end(), ',') == 1); // rank 0 listens for ranks 1 and 2
  auto out = run_hostile("data-plane " + ports + " " + flag + " 4");
  ::unlink(flag.c_str());
  INFO(out);
  CHECK(out.find("attack connections in place") != std::string::npos);
  CHECK(out.find("wrong secret let in: 0 of 2") != std::string::npos);
  CHECK(out.find("junk closed: 2 of 2") != std::string::npos);
  CHECK(out.find("bare closed: 2 of 2") != std::string::npos);
  CHECK(out.find("flood closed: 80 of 80") != std::string::npos);
  REQUIRE(group.wait(60s));
  for (std::size_t p = 0; p < 3; ++p) {
    CHECK(group[p].status == 0);
    CHECK(group[p].output().find("data plane sum ok") != std::string::npos);
  }
}
