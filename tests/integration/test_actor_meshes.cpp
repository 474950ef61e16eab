// Actor meshes across processes (tests/programs/actor_mesh_probe.cpp): every call form from every
// process of `actormesh launch -n 4 --cpu-devices 2`, a killed process's actors failing their
// callers with a named error and the owners' supervision events, and forged calls at a gateway
// refused while it keeps serving.
#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/process_group.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

namespace {

std::string probe() { return am::testing::test_program_dir() + "/actor_mesh_probe"; }

/// The number of lines of process `p` (as launch prefixes them) starting with `what`.
int count_lines(const std::string& output, int p, const std::string& what) {
  int n = 0;
  const auto needle = "[" + std::to_string(p) + "] " + what;
  for (std::size_t at = output.find(needle); at != std::string::npos; at = output.find(needle, at + 1))
    n += at == 0 || output[at - 1] == '\n';
  return n;
}

} // namespace

TEST_CASE("actor meshes: every call form from every process of a cluster of 4", "[integration][actor_mesh]") {
  REQUIRE(std::filesystem::exists(probe()));
  auto r = am::testing::run_command(am::testing::tool_path() + " launch -n 4 --cpu-devices 2 -- " + probe() + " calls", 120);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("FAIL") == std::string::npos);
  for (int p = 0; p < 4; ++p) {
    CHECK(count_lines(r.output, p, "ok ") == (p == 0 ? 15 : 13));
    CHECK(count_lines(r.output, p, "all checks done") == 1);
  }
}

TEST_CASE("actor meshes: a killed process fails its actors' calls with a named error within seconds and tells the "
          "owners",
          "[integration][actor_mesh][errors]") {
  using namespace std::chrono_literals;
  am::testing::process_group group;
  int port = am::testing::free_loopback_port();
  for (int p = 0; p < 3; ++p)
    group.start({probe(), "kill", "2"}, am::testing::cluster_env(p, 3, port));
  REQUIRE(group.wait(90s));
  INFO(group.all_output());
  CHECK(group[2].signal == 9);
  for (int p = 0; p < 2; ++p) {
    auto out = group[static_cast<std::size_t>(p)].output();
    CHECK(out.find("FAIL") == std::string::npos);
    CHECK(out.find("ok a call to an actor of the killed process fails, naming it and the process") != std::string::npos);
    CHECK(out.find("ok the failure came within 5 s") != std::string::npos);
    CHECK(out.find("ok the owner got one supervision event per actor of the killed process") != std::string::npos);
    CHECK(out.find("ok the other actors go on") != std::string::npos);
    CHECK(out.find("all checks done") != std::string::npos);
    CHECK(group[static_cast<std::size_t>(p)].status == 0);
  }
}

TEST_CASE("actor meshes: malformed and forged calls at a gateway are refused and it keeps serving",
          "[integration][actor_mesh][errors]") {
  auto r = am::testing::run_command(am::testing::tool_path() + " launch -n 2 --cpu-devices 2 -- " + probe() + " hostile", 120);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("FAIL") == std::string::npos);
  CHECK(count_lines(r.output, 1, "ok ") == 5);
  CHECK(count_lines(r.output, 0, "ok process 0 keeps serving") == 1);
  CHECK(r.output.find("actor gateway: dropped a malformed call") != std::string::npos);
}

TEST_CASE("actor meshes: oversized frames, strangers and a flood of idle connections at a gateway's port are cut off "
          "and the actors keep serving",
          "[integration][actor_mesh][errors]") {
  using namespace std::chrono_literals;
  const std::string secret = "test-secret-0123456789";
  const auto hostile = am::testing::test_program_dir() + "/hostile_peer";
  int port = am::testing::free_loopback_port();
  std::string flag = "/tmp/am_gateway_flag_" + std::to_string(::getpid()) + "_" + std::to_string(port);
  ::unlink(flag.c_str());
  am::testing::process_group group;
  for (int p = 0; p < 2; ++p) {
    auto env = am::testing::cluster_env(p, 2, port);
    env["AM_CLUSTER_TOKEN"] = secret;
    env["AM_LOG"] = "warning";
    group.start({probe(), "under-attack", flag}, env);
  }
  std::string gateway;
  for (int i = 0; i < 400 && gateway.empty(); ++i) {
    std::smatch m;
    auto out = group[1].output();
    if (std::regex_search(out, m, std::regex("gateway port: ([0-9]+)")))
      gateway = m[1];
    else
      std::this_thread::sleep_for(50ms);
  }
  REQUIRE(!gateway.empty());
  auto oversized = am::testing::run_command(hostile + " oversized " + gateway + " " + secret + " 3", 60).output;
  auto stranger = am::testing::run_command(hostile + " stranger " + gateway, 60).output;
  auto flood = am::testing::run_command(hostile + " flood " + gateway + " 100 2", 60).output;
  std::ofstream(flag) << "go";
  bool ended = group.wait(60s);
  ::unlink(flag.c_str());
  INFO(oversized << stranger << flood << group.all_output());
  REQUIRE(ended);
  CHECK(oversized.find("oversized headers sent: 3, closed by the coordinator: 3") != std::string::npos);
  CHECK(stranger.find("let in without the secret: no") != std::string::npos);
  for (std::size_t p = 0; p < 2; ++p) {
    CHECK(group[p].status == 0);
    CHECK(group[p].output().find("ok every process's actor answers after the attack") != std::string::npos);
    CHECK(group[p].output().find("still serving") != std::string::npos);
  }
}
