// Single-controller clusters of real processes for the integration tests: the controller and its
// workers all run one test program (so every process knows the names it registers), told their
// part by AM_ROLE. start_single_controller starts them; the program's main calls
// serve_or_play, which serves as a worker or plays the scenario named on the command line.
#pragma once

#include "support/probe_output.hpp"
#include "support/process_group.hpp"

#include <actormesh.hpp>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>

namespace am::testing {

/// Starts the controller (index 0) of `program` playing `scenario`, then `workers` workers of
/// the same binary, with `extra` in every environment.
inline void start_single_controller(process_group& group, const std::string& program, int workers,
                                    const std::string& scenario, const std::map<std::string, std::string>& extra = {}) {
  int port = free_loopback_port();
  int count = workers + 1;
  for (int p = 0; p < count; ++p) {
    auto env = cluster_env(p, count, port);
    env["AM_ROLE"] = p == 0 ? "controller" : "worker";
    for (auto& [k, v] : extra)
      env[k] = v;
    if (p == 0)
      group.start({program, scenario}, env);
    else
      group.start({program}, env);
  }
}

/// A test program's main: a worker (AM_ROLE=worker) serves its controller until it stops; the
/// controller plays the scenario argv[1] names among `scenarios`. Returns the exit status (2: no
/// or an unknown scenario; 1: an error, printed as "error <kind>: ...").
inline int serve_or_play(int argc, char** argv, const std::map<std::string, std::function<int()>>& scenarios) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const char* role = std::getenv("AM_ROLE");
  try {
    am::runtime rt;
    if (role && std::string(role) == "worker") {
      rt.serve();
      say("worker " + std::to_string(am::process_index()) + " done");
      return 0;
    }
    auto it = argc < 2 ? scenarios.end() : scenarios.find(argv[1]);
    if (it == scenarios.end()) {
      std::string names;
      for (auto& [name, play] : scenarios)
        names += (names.empty() ? "" : "|") + name;
      std::fprintf(stderr, "usage: %s %s\n", argv[0], names.c_str());
      return 2;
    }
    say("controller of " + std::to_string(am::process_count()) + " processes");
    return it->second();
  } catch (const std::exception& e) {
    report(e);
    return 1;
  }
}

} // namespace am::testing
