// `actormesh launch -n N [--cpu-devices K] [--nnodes M --node-rank R --rdzv HOST:PORT] -- program args...`:
// the command line of the launcher (one a machine).
// Every argument is checked while parsing, so that a bad command line starts nothing (run_cli is also
// called in process by tests and the fuzz driver); the processes themselves are run_launch's.
#include "tools/commands.hpp"

#include "tools/launch_environment.hpp"
#include "tools/launch_supervisor.hpp"
#include "tools/launch_trace.hpp"

#include <fmt/format.h>

#include "actormesh/actors/errors.hpp"
#include "devices/cluster_environment.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>
#include <string_view>

namespace am::tools {

namespace {

/// The most virtual CPU devices --cpu-devices gives each process (each is an actor with a thread).
constexpr int max_launch_cpu_devices = 4096;

/// The most nodes (launchers) of one cluster, and the most restarts of one launch.
constexpr int max_launch_nodes = 4096;
constexpr int max_launch_restarts = 1000;

struct launch_args {
  launch_options options;
  int cpu_devices = 0;
  int coordinator_port = 0;
  double timeout_seconds = 0;
  std::string rdzv;
  std::string log_dir;
  std::string ranks_filter;
};

/// A decimal number in [0, limit), or nothing.
std::optional<int> process_number(std::string_view text, int limit) {
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0 || value >= limit)
    return std::nullopt;
  return value;
}

/// --ranks-filter's "0,2,4-7": the process ids it names, each of [0, world).
std::vector<int> parse_ranks_filter(const std::string& text, int world) {
  std::vector<int> ranks;
  std::string_view rest(text);
  while (true) {
    const auto comma = rest.find(',');
    const auto piece = rest.substr(0, comma);
    const auto dash = piece.find('-');
    const auto first = process_number(piece.substr(0, dash), world);
    const auto last = dash == std::string_view::npos ? first : process_number(piece.substr(dash + 1), world);
    if (!first || !last || *last < *first)
      throw am::value_error(fmt::format("--ranks-filter: '{}' is not a process of this launch or a range of them "
                                        "(processes 0..{})", piece, world - 1));
    for (int r = *first; r <= *last; ++r)
      ranks.push_back(r);
    if (comma == std::string_view::npos) {
      std::sort(ranks.begin(), ranks.end()); // for the supervisor's binary search
      ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
      return ranks;
    }
    rest.remove_prefix(comma + 1);
  }
}

/// --rdzv's "HOST:PORT" (an IPv6 host in brackets) into the options.
void parse_rdzv(const std::string& text, launch_options& options) {
  const auto colon = text.rfind(':');
  std::string host = colon == std::string::npos ? std::string() : text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const auto port = colon == std::string::npos ? std::nullopt : am::parse_port(std::string_view(text).substr(colon + 1));
  if (host.empty() || !port)
    throw am::value_error("--rdzv: '" + text + "' is not HOST:PORT (the coordinator's address, on node 0)");
  options.coordinator_host = host;
  options.coordinator_port = *port;
}

/// The checks that concern several options at once; throws am::value_error.
void check_nodes(const launch_options& options) {
  if (options.node_rank >= options.num_nodes)
    throw am::value_error(fmt::format("--node-rank {} is not a node of --nnodes {} (0..{})", options.node_rank,
                                      options.num_nodes, options.num_nodes - 1));
  if (options.num_nodes == 1)
    return;
  if (!options.coordinator_host)
    throw am::value_error(fmt::format("--nnodes {} needs --rdzv HOST:PORT, the coordinator's address on node 0, "
                                      "the same for every node",
                                      options.num_nodes));
  if (options.max_restarts > 0)
    throw am::value_error(fmt::format("--max-restarts needs --nnodes 1: the launchers of {} nodes would not "
                                      "restart their processes together",
                                      options.num_nodes));
  if (!user_gave_cluster_token())
    throw am::value_error(fmt::format("--nnodes {}: the processes of every node need the same cluster secret; "
                                      "set AM_CLUSTER_TOKEN_FILE (or AM_CLUSTER_TOKEN) alike for each node's "
                                      "launcher (doc/multihost_security.md)",
                                      options.num_nodes));
}

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
  auto* port = cmd->add_option("--coordinator-port", args->coordinator_port,
                               "Port of the coordinator on 127.0.0.1 (default: a free one)")
                   ->check(CLI::Range(1, 65535));
  cmd->add_option("--nnodes", args->options.num_nodes,
                  "Machines that each run a launcher of the same cluster, with -n processes each (default 1)")
      ->check(CLI::Range(1, max_launch_nodes));
  cmd->add_option("--node-rank", args->options.node_rank,
                  "This machine's place among them, 0..nnodes-1: its processes are node-rank * n onwards")
      ->check(CLI::Range(0, max_launch_nodes - 1));
  cmd->add_option("--rdzv", args->rdzv,
                  "HOST:PORT of the coordinator (process 0, on node 0), the same on every node")
      ->excludes(port);
  auto* restarts = cmd->add_option("--max-restarts", args->options.max_restarts,
                                   "Start the whole group again after a process failed, up to this many times "
                                   "(AM_RESTART_COUNT tells the program which attempt it is)")
                       ->check(CLI::Range(0, max_launch_restarts));
  cmd->add_flag("--keep-going", args->options.keep_going,
                "A failed process does not stop the others; exit 0 when any of them ended well")
      ->excludes(restarts);
  cmd->add_option("--log-dir", args->log_dir,
                  "Also write each process's output to DIR/attempt_<k>/<process>/stdout.log and stderr.log");
  cmd->add_option("--ranks-filter", args->ranks_filter,
                  "Show only these processes' lines on the console, e.g. 0 or 0,2-3 (the log files keep all)");
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
    if (cmd->count("--rdzv") > 0)
      parse_rdzv(args->rdzv, options);
    if (cmd->count("--log-dir") > 0)
      options.log_dir = args->log_dir;
    check_nodes(options);
    if (options.world_size() > max_launch_processes * max_launch_nodes / 4)
      throw am::value_error(fmt::format("--nnodes {} with -n {}: more than {} processes in all", options.num_nodes,
                                        options.num_processes, max_launch_processes * max_launch_nodes / 4));
    if (cmd->count("--ranks-filter") > 0)
      options.ranks_filter = parse_ranks_filter(args->ranks_filter, options.world_size());
    // A trace (the program's --am-trace, else AM_TRACE): an earlier run's FILE.rank<i> removed first,
    // the processes' traces merged into one file after.
    const auto trace = launch_trace_path(options.command);
    remove_stale_launch_traces(trace, options.first_process(), options.num_processes, options.world_size());
    status = run_launch(options, out, err);
    merge_launch_traces(trace, options.first_process(), options.num_processes, options.world_size(), err);
  });
}

} // namespace am::tools
