// A peer that tries to join a cluster with a TLS configuration of its own choosing, through the
// runtime's own join path (am::detail::join_cluster over CAF's OpenSSL module), so the mutual-TLS
// tests can try configurations AM_TLS_* refuses to express: no certificate at all (CAF's anonymous
// TLS) or a CA file but no certificate.
//
//   tls_intruder CERT KEY CA TIMEOUT_MS     ("-" for an empty file name)
//
// The coordinator, process id and count come from AM_COORDINATOR, AM_PROCESS_ID, AM_NUM_PROCESSES.
// Prints "joined (unexpected)" and exits 0 if the join succeeds; otherwise prints
// "refused after ms: N" and "error: <message>" and exits 1. CAF itself refuses a CA file without a
// certificate: its OpenSSL manager throws "No certificate configured for SSL endpoint" when the
// actor system starts.
#include "cluster/join.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace {

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

std::string file_arg(const char* arg) {
  return std::string(arg) == "-" ? std::string() : std::string(arg);
}

std::string env_or(const char* name, const char* fallback) {
  auto* v = std::getenv(name);
  return v ? v : fallback;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    say("usage: tls_intruder CERT KEY CA TIMEOUT_MS");
    return 3;
  }
  auto start = std::chrono::steady_clock::now();
  try {
    std::string coordinator = env_or("AM_COORDINATOR", "127.0.0.1:1");
    am::detail::join_settings s;
    s.networked = true;
    s.tls = true;
    s.process = std::stoi(env_or("AM_PROCESS_ID", "1"));
    s.process_count = std::stoi(env_or("AM_NUM_PROCESSES", "2"));
    auto colon = coordinator.rfind(':');
    s.coordinator_host = coordinator.substr(0, colon);
    s.coordinator_port = static_cast<std::uint16_t>(std::stoi(coordinator.substr(colon + 1)));
    s.listen_address = s.coordinator_host;
    s.join_timeout = std::chrono::milliseconds(std::stoi(argv[4]));
    s.heartbeat_interval = std::chrono::milliseconds(500);
    s.heartbeat_timeout = std::chrono::milliseconds(5000);
    s.local_devices.push_back({0, s.process, am::platform::cpu, 0});
    caf::actor_system_config cfg;
    cfg.set("logger.verbosity", caf::atom("quiet"));
    am::detail::configure_cluster_modules(cfg, s, file_arg(argv[1]), file_arg(argv[2]), file_arg(argv[3]));
    caf::actor_system system{cfg};
    auto membership = am::detail::join_cluster(system, s);
    say("joined (unexpected)");
    return 0;
  } catch (const std::exception& e) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    say("refused after ms: " + std::to_string(ms.count()));
    say(std::string("error: ") + e.what());
    // CAF throws some configuration errors from the actor system's constructor, after its modules
    // started threads that nothing joins then: leave without unwinding further.
    std::_Exit(1);
  }
}
