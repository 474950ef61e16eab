// A cluster across network namespaces: as root, three namespaces with one address each
// (10.77.0.1-3/24), their veth pairs joined by a bridge inside a fourth ("hub") namespace, so that
// every process of the test, the coordinator included, runs inside a namespace under `ip netns
// exec`, and nothing connects to a namespace's address from the root namespace (that traffic would
// leave the machine through its default route). Each process lists the global devices and passes a
// barrier; then everything is deleted, on failure too. Not root, or no `ip netns`: the case is
// skipped (ctest's skip code 4) with the reason.
#include "support/build_paths.hpp"
#include "support/process_group.hpp"
#include "support/tls_certificates.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using am::testing::process_group;
using env_map = std::map<std::string, std::string>;
using steady = std::chrono::steady_clock;

constexpr const char* prefix = "amtest"; // namespaces are named amtest<pid>h, amtest<pid>p<k>
constexpr int coordinator_port = 24601;  // inside the namespaces nothing else listens

std::string program(const std::string& name) {
  return am::testing::test_program_dir() + "/" + name;
}

/// The `ip` tool's absolute path (process_group starts programs with execv), or "".
std::string ip_tool() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
    if (::access(p, X_OK) == 0)
      return p;
  return {};
}

/// Runs a shell command bounded by 20 s; returns its exit status and sets `output` to what it said.
int shell(const std::string& command, std::string* output = nullptr) {
  std::string full = "timeout 20 " + command + " 2>&1";
  std::string text;
  FILE* pipe = ::popen(full.c_str(), "r");
  if (!pipe)
    return -1;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe))
    text += buf;
  int status = ::pclose(pipe);
  if (output)
    *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Prints the reason and exits with ctest's skip code (Catch2 v2 has no SKIP).
[[noreturn]] void skip(const std::string& reason) {
  std::printf("SKIPPED: %s\n", reason.c_str());
  std::fflush(stdout);
  std::_Exit(4);
}

/// Deletes namespaces with our prefix left by runs that died before their cleanup (their pid is gone).
void delete_stale_namespaces(const std::string& ip) {
  std::string list;
  if (shell(ip + " netns list", &list) != 0)
    return;
  std::istringstream in(list);
  for (std::string line; std::getline(in, line);) {
    auto name = line.substr(0, line.find(' '));
    if (name.rfind(prefix, 0) != 0)
      continue;
    auto digits = name.substr(std::string(prefix).size());
    auto end = digits.find_first_not_of("0123456789");
    if (end == 0)
      continue;
    auto pid = std::stol(digits.substr(0, end));
    if (pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      shell(ip + " netns delete " + name);
  }
}

/// The namespaces of one test: a hub with a bridge and `n` member namespaces, each with one veth
/// end ("eth0", 10.77.0.<k+1>/24) whose peer is a port of the bridge. Deleted in the destructor
/// (a namespace's deletion removes its interfaces, and with them their veth peers).
class namespace_topology {
public:
  namespace_topology(std::string ip, int n) : ip_(std::move(ip)) {
    delete_stale_namespaces(ip_);
    auto base = std::string(prefix) + std::to_string(::getpid());
    hub_ = base + "h";
    for (int k = 0; k < n; ++k)
      members_.push_back(base + "p" + std::to_string(k));
    std::string out;
    if (shell(ip_ + " netns add " + hub_, &out) != 0) {
      while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
        out.pop_back();
      skip_reason_ = "`ip netns add` failed: " + out;
      return;
    }
    created_.push_back(hub_);
    try {
      build(n);
    } catch (...) {
      remove();
      throw;
    }
  }
  namespace_topology(const namespace_topology&) = delete;
  namespace_topology& operator=(const namespace_topology&) = delete;
  ~namespace_topology() { remove(); }

  /// Deletes every namespace made so far (also called by the destructor); returns what is left.
  std::vector<std::string> remove() {
    for (auto it = created_.rbegin(); it != created_.rend(); ++it)
      shell(ip_ + " netns delete " + *it);
    created_.clear();
    std::vector<std::string> left;
    std::string list;
    shell(ip_ + " netns list", &list);
    for (auto& ns : members_)
      if (list.find(ns) != std::string::npos)
        left.push_back(ns);
    if (list.find(hub_) != std::string::npos)
      left.push_back(hub_);
    return left;
  }

  const std::string& skip_reason() const { return skip_reason_; }
  const std::string& member(int k) const { return members_[static_cast<std::size_t>(k)]; }
  static std::string address(int k) { return "10.77.0." + std::to_string(k + 1); }

  /// argv that runs `args` inside member namespace `k`.
  std::vector<std::string> inside(int k, std::vector<std::string> args) const {
    std::vector<std::string> argv{ip_, "netns", "exec", member(k)};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

private:
  void build(int n) {
    must(ip_ + " -n " + hub_ + " link set lo up");
    must(ip_ + " -n " + hub_ + " link add br0 type bridge");
    must(ip_ + " -n " + hub_ + " link set br0 up");
    for (int k = 0; k < n; ++k) {
      auto& ns = members_[static_cast<std::size_t>(k)];
      must(ip_ + " netns add " + ns);
      created_.push_back(ns);
      auto port = "v" + std::to_string(k);
      must(ip_ + " -n " + hub_ + " link add " + port + " type veth peer name eth0 netns " + ns);
      must(ip_ + " -n " + hub_ + " link set " + port + " master br0");
      must(ip_ + " -n " + hub_ + " link set " + port + " up");
      must(ip_ + " -n " + ns + " addr add " + address(k) + "/24 dev eth0");
      must(ip_ + " -n " + ns + " link set eth0 up");
      must(ip_ + " -n " + ns + " link set lo up");
    }
  }

  void must(const std::string& command) {
    std::string out;
    if (shell(command, &out) != 0)
      throw std::runtime_error("`" + command + "` failed: " + out);
  }

  std::string ip_;
  std::string hub_;
  std::vector<std::string> members_;
  std::vector<std::string> created_;
  std::string skip_reason_;
};

/// Skips unless this process may make namespaces.
std::string require_netns() {
  if (::geteuid() != 0)
    skip("network namespaces need root (euid " + std::to_string(::geteuid()) + ")");
  auto ip = ip_tool();
  if (ip.empty())
    skip("the ip tool (iproute2) is not installed");
  return ip;
}

env_map member_env(int id, int count) {
  return {{"AM_COORDINATOR", namespace_topology::address(0) + ":" + std::to_string(coordinator_port)},
          {"AM_NUM_PROCESSES", std::to_string(count)},
          {"AM_PROCESS_ID", std::to_string(id)},
          {"AM_LISTEN_ADDRESS", namespace_topology::address(id)},
          {"AM_CPU_DEVICES", "2"},
          {"AM_JOIN_TIMEOUT", "30s"},
          {"AM_CLUSTER_TOKEN", "netns-test-secret"}, // beyond loopback: a secret (or TLS) is required
          {"AM_LOG", "error"}};
}

std::string line_with(const std::string& text, const std::string& start) {
  auto at = text.find(start);
  if (at == std::string::npos)
    return {};
  return text.substr(at, text.find('\n', at) - at);
}

/// Runs `cluster_probe join` as processes 0..n-1, process k in namespace k, with `extra` added to
/// process k's environment; checks each sees every process's devices and passes the barrier.
void run_join(const namespace_topology& topo, int n, const std::vector<env_map>& extra = {}) {
  process_group group;
  for (int k = 0; k < n; ++k) {
    auto env = member_env(k, n);
    if (static_cast<std::size_t>(k) < extra.size())
      for (auto& [key, value] : extra[static_cast<std::size_t>(k)])
        env[key] = value;
    group.start(topo.inside(k, {program("cluster_probe"), "join"}), env);
  }
  bool ended = group.wait(60s);
  INFO(group.all_output());
  REQUIRE(ended);
  auto expected = line_with(group[0].output(), "devices:");
  for (int k = 0; k < n; ++k) {
    auto out = group[static_cast<std::size_t>(k)].output();
    CHECK(group[static_cast<std::size_t>(k)].status == 0);
    CHECK(out.find("process " + std::to_string(k) + " of " + std::to_string(n)) != std::string::npos);
    CHECK(out.find("barrier passed") != std::string::npos);
    auto devices = line_with(out, "devices:");
    CHECK(devices == expected);
    for (int p = 0; p < n; ++p)
      CHECK(devices.find("@" + std::to_string(p)) != std::string::npos);
  }
  // 2 CPU devices per process, global ids by process then local ordinal.
  CHECK(expected.find("CpuDevice(id=" + std::to_string(2 * n - 1) + ")@" + std::to_string(n - 1)) != std::string::npos);
}

} // namespace

TEST_CASE("three processes in three network namespaces join over a bridge", "[integration][cluster][netns]") {
  auto ip = require_netns();
  namespace_topology topo(ip, 3);
  if (!topo.skip_reason().empty())
    skip(topo.skip_reason());
  run_join(topo, 3);
  CHECK(topo.remove().empty());
}

TEST_CASE("mutual TLS across network namespaces", "[integration][cluster][netns][tls]") {
  auto ip = require_netns();
  if (!am::testing::openssl_available())
    skip("the openssl command line tool is not installed");
  am::testing::tls_certificates certs(2);
  namespace_topology topo(ip, 2);
  if (!topo.skip_reason().empty())
    skip(topo.skip_reason());
  run_join(topo, 2, {certs.node(0).env(), certs.node(1).env()});
  CHECK(topo.remove().empty());
}
