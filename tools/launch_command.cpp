// `actormesh launch -n N [--cpu-devices K] -- program args...`: the command line of the local launcher.
// Every argument is checked while parsing, so that a bad command line starts nothing (run_cli is also
// called in process by tests and the fuzz driver); the processes themselves are run_launch's.
#include "tools/commands.hpp"

#include "tools/launch_supervisor.hpp"
#include "tools/launch_trace.hpp"

#include <fmt/format.h>

#include <cmath>
#include <memory>

namespace am::tools {

namespace {

/// The most virtual CPU devices --cpu-devices gives each process (each is an actor with a thread).
constexpr int max_launch_cpu_devices = 4096;

struct launch_args {
  launch_options options;
  int cpu_devices = 0;
  int coordinator_port = 0;
  double timeout_seconds = 0;
};

// A number of seconds in [low, high] (low itself excluded unless `low_allowed`); NaN and infinities
// are refused too, which CLI::Range would let through.
CLI::Validator seconds_between(double low, double high, bool low_allowed) {
  const auto description = fmt::format("SECONDS in {}{:g}, {:g}]", low_allowed ? "[" : "(", low, high);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value < low
            || (value == low && !low_allowed) || value > high)
          return fmt::format("'{}' is not a number of seconds in {}{:g}, {:g}]", text, low_allowed ? "[" : "(", low,
                             high);
        return {};
      },
      description);
}

} // namespace

void add_launch_command(CLI::App& app, std::ostream& out, std::ostream& err, int& status) {
  auto args = std::make_shared<launch_args>();
  auto* cmd = app.add_subcommand("launch",
                                 "Run N local processes of a program as one cluster (coordinator on a free "
                                 "loopback port), prefixing their output with the process index");
  cmd->add_option("-n,--num-processes", args->options.num_processes, "Number of processes")
      ->required()
      ->check(CLI::Range(1, max_launch_processes));
  cmd->add_option("--cpu-devices", args->cpu_devices, "Virtual CPU devices per process (AM_CPU_DEVICES)")
      ->check(CLI::Range(1, max_launch_cpu_devices));
  cmd->add_option("--coordinator-port", args->coordinator_port,
                  "Port of the coordinator on 127.0.0.1 (default: a free one)")
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--grace", args->options.grace_seconds,
                  "Seconds from SIGTERM to SIGKILL when stopping the processes (default 5)")
      ->check(seconds_between(0, 3600, true));
  cmd->add_option("--timeout", args->timeout_seconds,
                  "Stop everything after this many seconds and exit 124 (default: no limit)")
      ->check(seconds_between(0, 1e9, false));
  cmd->add_option("program", args->options.command, "The program and its arguments, after --")->required();
  cmd->callback([args, cmd, &out, &err, &status] {
    auto options = args->options;
    if (cmd->count("--cpu-devices") > 0)
      options.cpu_devices = args->cpu_devices;
    if (cmd->count("--coordinator-port") > 0)
      options.coordinator_port = args->coordinator_port;
    if (cmd->count("--timeout") > 0)
      options.timeout_seconds = args->timeout_seconds;
    remove_stale_launch_traces(options.num_processes); // AM_TRACE: an earlier run's FILE.rank<i>
    status = run_launch(options, out, err);
    merge_launch_traces(options.num_processes, err); // AM_TRACE: the processes' traces into one file
  });
}

} // namespace am::tools
