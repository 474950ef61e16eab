/// The subcommands of the `actormesh` tool; each lives in its own file and registers itself here.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace am {
class named_sharding;
} // namespace am

namespace am::tools {

/// `actormesh info`: build configuration, devices found, and why GPUs are absent when they are.
void add_info_command(CLI::App& app);

/// `actormesh visualize`: JAX's sharding picture of an array shape on a mesh of virtual CPU devices.
void add_visualize_command(CLI::App& app);

/// `actormesh shards`: the block and replica id each device holds, as a table or one JSON line.
void add_shards_command(CLI::App& app);

/// The options `visualize` and `shards` share: an array shape and a NamedSharding over virtual CPU
/// devices 0..N-1 (N = the mesh size), optionally placed in another device order.
struct sharding_args {
  /// --shape 8192,8192: the array shape.
  std::vector<std::int64_t> shape;
  /// --mesh 4x2: the mesh shape.
  std::string mesh = "8";
  /// --axes a,b: one name per mesh axis (default x, y, z, ...).
  std::string axes;
  /// --spec a,b: the PartitionSpec (none, a+b for a tuple, empty for P()).
  std::string spec;
  /// --device-order 0,1,2,3,6,7,4,5: the device ids in mesh order (default 0..N-1).
  std::vector<int> device_order;
};

/// Adds --shape, --mesh, --axes, --spec and --device-order to `cmd`, filling `args`.
void add_sharding_args(CLI::App& cmd, sharding_args& args);

/// The sharding the arguments describe; library errors (bad spec, unknown axis, ...) propagate.
std::shared_ptr<const named_sharding> make_sharding(const sharding_args& args);

} // namespace am::tools
