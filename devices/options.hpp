/// Runtime options and where they come from. Precedence, lowest first: built-in defaults, AM_*
/// environment variables, command-line flags (--am-*), values set in code.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace am {

/// How CAF schedules the runtime's event-based actors (device actors always have their own thread).
enum class scheduler_policy {
  sharing,  ///< one shared queue: lowest latency on few cores (the default)
  stealing, ///< per-worker queues with stealing: better for many busy actors
};

/// Options as given in code: every field left empty falls back to flags, environment, defaults.
struct options {
  /// Number of virtual CPU devices (like XLA's --xla_force_host_platform_device_count). Default 8.
  std::optional<int> cpu_devices;
  /// Scheduler policy of CAF's worker threads. Default sharing.
  std::optional<scheduler_policy> scheduler;
  /// CAF worker threads; 0 means CAF's default (one per core). Default 0.
  std::optional<int> scheduler_threads;
  /// Whether to use CUDA GPUs when some are found. Default true.
  std::optional<bool> use_gpus;
  /// Log level: off, error, warning, info, debug, trace. Default warning (quiet).
  std::optional<std::string> log_level;
  /// Bytes of buffers each CPU device may hold at once (0: no limit); beyond it allocations fail
  /// with am::out_of_memory_error. Default 0.
  std::optional<std::uint64_t> cpu_memory_limit;
};

/// The options in force, every field decided.
struct resolved_options {
  int cpu_devices = 8;
  am::scheduler_policy scheduler = am::scheduler_policy::sharing;
  int scheduler_threads = 0;
  bool use_gpus = true;
  std::string log_level = "warning";
  std::uint64_t cpu_memory_limit = 0;
};

/// Reads an environment variable; returns null when unset. Replaceable for tests.
using environment_lookup = std::function<const char*(const char*)>;

/// Combines defaults < environment (AM_CPU_DEVICES, AM_SCHEDULER, AM_SCHEDULER_THREADS, AM_USE_GPUS,
/// AM_LOG, AM_CPU_MEMORY_LIMIT) < flags in `args` (--am-cpu-devices N, --am-scheduler,
/// --am-scheduler-threads, --am-gpus, --am-log, --am-cpu-memory-limit; `--flag=value` or
/// `--flag value`; other arguments are ignored) < `in_code`. A memory limit is a byte count,
/// optionally with a binary suffix: 512M, 2GiB, 64k.
/// Throws am::value_error naming the source of a bad value.
resolved_options resolve_options(const options& in_code, const std::vector<std::string>& args,
                                 const environment_lookup& env);

/// The same with the process environment.
resolved_options resolve_options(const options& in_code, const std::vector<std::string>& args = {});

/// Printable name of a policy (`sharing`, `stealing`).
std::string to_string(scheduler_policy p);

} // namespace am
