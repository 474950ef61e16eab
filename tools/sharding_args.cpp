// The options `visualize` and `shards` share, and how they become a shape and a NamedSharding: every
// number goes through the library's checked parsers (nothing clamped, no empty entry), and meshes
// larger than max_cli_devices are refused before anything is built.
#include "tools/commands.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/sharding/mesh.hpp"
#include "actormesh/sharding/named_sharding.hpp"

#include <algorithm>

namespace am::tools {

namespace {

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find(',', start);
    out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos)
      return out;
    start = end + 1;
  }
}

std::vector<std::string> default_axis_names(std::size_t n) {
  static const char* const names[] = {"x", "y", "z"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(n <= 3 ? names[i] : "a" + std::to_string(i));
  return out;
}

// The devices in the order --device-order gives (each id 0..count-1 once), or in id order.
std::vector<device> ordered_devices(const std::string& order, std::int64_t count) {
  auto all = virtual_cpu_devices(static_cast<int>(count));
  if (order.empty())
    return all;
  const auto ids = detail::parse_extents(order, ',', "device order",
                                         "write device ids separated by ',', like 0,1,2,3,6,7,4,5");
  auto sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  bool permutation = static_cast<std::int64_t>(sorted.size()) == count;
  for (std::size_t i = 0; permutation && i < sorted.size(); ++i)
    permutation = sorted[i] == static_cast<std::int64_t>(i);
  if (!permutation)
    throw value_error("--device-order must list each device id 0.." + std::to_string(count - 1) + " once, for a mesh of "
                      + std::to_string(count) + " devices");
  std::vector<device> devices;
  for (auto id : ids)
    devices.push_back(all[static_cast<std::size_t>(id)]);
  return devices;
}

} // namespace

void add_sharding_args(CLI::App& cmd, sharding_args& args) {
  cmd.add_option("--shape", args.shape, "Array shape, e.g. 8192,8192 (empty for a scalar)")->required();
  cmd.add_option("--mesh", args.mesh, "Mesh shape, e.g. 4x2 (default 8; at most "
                                          + std::to_string(max_cli_devices) + " devices)");
  cmd.add_option("--axes", args.axes, "Mesh axis names, e.g. a,b (default x,y,z)");
  cmd.add_option("--spec", args.spec,
                 "PartitionSpec: entries separated by ',', none for an unsharded dimension, a+b for a "
                 "tuple of mesh axes, empty for P()");
  cmd.add_option("--device-order", args.device_order,
                 "Device ids in mesh order, e.g. 0,1,2,3,6,7,4,5 (default 0..N-1)");
}

sharding_request parse_sharding_args(const sharding_args& args) {
  auto shape = parse_shape(args.shape);
  const auto mesh_shape = parse_mesh_shape(args.mesh);
  const auto count = element_count(mesh_shape);
  if (count > max_cli_devices)
    throw value_error("--mesh " + args.mesh + " has " + std::to_string(count) + " devices; visualize and shards take at most "
                      + std::to_string(max_cli_devices) + " (a larger picture or listing is too large to read)");
  const auto names = args.axes.empty() ? default_axis_names(mesh_shape.size()) : split_names(args.axes);
  am::mesh m(create_device_mesh(mesh_shape, ordered_devices(args.device_order, count)), names);
  return {std::move(shape), make_named_sharding(m, parse_partition_spec(args.spec))};
}

} // namespace am::tools
