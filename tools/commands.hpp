/// The subcommands of the `actormesh` tool; each lives in its own file and registers itself here.
#pragma once

#include "actormesh/actors/shape.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <exception>
#include <iosfwd>
#include <memory>
#include <string>

namespace am {
class named_sharding;
} // namespace am

namespace am::tools {

/// Runs the `actormesh` command line `argv[0..argc)` without exiting the process, so tests and the
/// fuzz driver can call it: the subcommands' output goes to `out`, `--help` to `out` with status 0,
/// and every error (a bad argument, a library error) as one line on `err` with status 2.
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

/// `actormesh info`: build configuration, devices found, and why GPUs are absent when they are.
void add_info_command(CLI::App& app, std::ostream& out);

/// `actormesh visualize`: JAX's sharding picture of an array shape on a mesh of virtual CPU devices.
void add_visualize_command(CLI::App& app, std::ostream& out);

/// `actormesh shards`: the block and replica id each device holds, as a table or one JSON line.
void add_shards_command(CLI::App& app, std::ostream& out);

/// `actormesh launch -n N [--cpu-devices K] -- program args...`: runs N local processes of a program
/// as one cluster and supervises them (tools/launch_supervisor.hpp). Its callback, run only after
/// every argument is checked, sets `status` to the launch's exit status; the children's output goes
/// to `out` and `err`, prefixed with their index.
void add_launch_command(CLI::App& app, std::ostream& out, std::ostream& err, int& status);

/// `actormesh worker --coordinator HOST:PORT --process-id K --num-processes N [--cpu-devices D]`: a
/// worker of a single-controller cluster; serves the controller's calls until it stops. When the
/// controller is lost it writes the error to `err` at once, sets `status` to 2 and stops within a
/// bound (a shutdown that does not finish ends the process: nothing is left to wait for).
void add_worker_command(CLI::App& app, std::ostream& out, std::ostream& err, int& status);

/// The one line the command line prints for a failure: the message of an am::error as it is, any
/// other exception's prefixed with "error: ", line breaks turned into spaces.
std::string error_line(const std::exception& e);

/// `actormesh stress --threads T --calls N [--processes P] [--mix all|colocated|arrays]`: the stress
/// mix of tools/stress_mix.hpp with a progress display; sets `status` to 1 when any call ran out of
/// order or failed, else 0.
void add_stress_command(CLI::App& app, std::ostream& out, std::ostream& err, int& status);

/// `actormesh inspect-hang DIR`: which process stopped at which collective, from the flight
/// recorder dumps in DIR (observability/hang_report.hpp).
void add_inspect_hang_command(CLI::App& app, std::ostream& out);

/// `actormesh trace summary PATH [--png OUT.png]`: per-track busy time, idle gaps and the longest
/// stalls of a trace file, and its timeline picture (tools/trace_summary.hpp, tools/trace_png.hpp);
/// `actormesh trace merge OUT IN...`: several trace files as one (tools/launch_trace.hpp).
void add_trace_command(CLI::App& app, std::ostream& out);

/// The most devices `visualize` and `shards` take: a listing of 16384 devices is about 1 MB, and a
/// mesh of a million would print 70-80 MB, which no one reads; larger meshes are refused.
inline constexpr std::int64_t max_cli_devices = 16384;

/// The options `visualize` and `shards` share, as written on the command line (parsed by
/// parse_sharding_args, so that every number is checked the same way and none is clamped).
struct sharding_args {
  /// --shape 8192,8192: the array shape.
  std::string shape;
  /// --mesh 4x2: the mesh shape.
  std::string mesh = "8";
  /// --axes a,b: one name per mesh axis (default x, y, z, ...).
  std::string axes;
  /// --spec a,b: the PartitionSpec (none, a+b for a tuple, empty for P()).
  std::string spec;
  /// --device-order 0,1,2,3,6,7,4,5: the device ids in mesh order (default 0..N-1).
  std::string device_order;
};

/// Adds --shape, --mesh, --axes, --spec and --device-order to `cmd`, filling `args`.
void add_sharding_args(CLI::App& cmd, sharding_args& args);

/// An array shape and the NamedSharding laid over it, as sharding_args describe them.
struct sharding_request {
  /// The array shape.
  shape_t shape;
  /// The sharding over virtual CPU devices 0..N-1.
  std::shared_ptr<const named_sharding> sharding;
};

/// Parses and checks sharding_args (the shape, the mesh, the device order, the axis names and the
/// spec, with the library's parsers); throws am::value_error for bad text, numbers past int64, a
/// mesh of more than max_cli_devices devices, and the library's own errors (unknown axis, ...).
sharding_request parse_sharding_args(const sharding_args& args);

} // namespace am::tools
