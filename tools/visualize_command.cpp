// `actormesh visualize`: prints JAX's text picture of how an array of a given shape is laid out by a
// NamedSharding over virtual CPU devices; pure index maths, no runtime is started. Also holds the
// option handling that `visualize` and `shards` share.
#include "tools/commands.hpp"

#include "actors/errors.hpp"
#include "sharding/named_sharding.hpp"
#include "sharding/visualize.hpp"

#include <algorithm>
#include <cstdio>

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

struct visualize_args {
  sharding_args sharding;
  std::string platform;
};

} // namespace

void add_sharding_args(CLI::App& cmd, sharding_args& args) {
  cmd.add_option("--shape", args.shape, "Array shape, e.g. 8192,8192")->required()->delimiter(',');
  cmd.add_option("--mesh", args.mesh, "Mesh shape, e.g. 4x2 (default 8)");
  cmd.add_option("--axes", args.axes, "Mesh axis names, e.g. a,b (default x,y,z)");
  cmd.add_option("--spec", args.spec,
                 "PartitionSpec: entries separated by ',', none for an unsharded dimension, a+b for a "
                 "tuple of mesh axes, empty for P()");
  cmd.add_option("--device-order", args.device_order,
                 "Device ids in mesh order, e.g. 0,1,2,3,6,7,4,5 (default 0..N-1)")
      ->delimiter(',');
}

std::shared_ptr<const named_sharding> make_sharding(const sharding_args& args) {
  const auto mesh_shape = parse_mesh_shape(args.mesh);
  std::int64_t count = 1;
  for (auto d : mesh_shape)
    count *= d;
  if (count > 1 << 20)
    throw value_error("A mesh of " + std::to_string(count) + " devices is too large to draw");
  const auto all = virtual_cpu_devices(static_cast<int>(count));
  std::vector<device> devices = all;
  if (!args.device_order.empty()) {
    auto sorted = args.device_order;
    std::sort(sorted.begin(), sorted.end());
    bool permutation = static_cast<std::int64_t>(sorted.size()) == count;
    for (std::size_t i = 0; permutation && i < sorted.size(); ++i)
      permutation = sorted[i] == static_cast<int>(i);
    if (!permutation)
      throw value_error("--device-order must list each device id 0.." + std::to_string(count - 1) +
                        " once, for a mesh of " + std::to_string(count) + " devices");
    devices.clear();
    for (int id : args.device_order)
      devices.push_back(all[static_cast<std::size_t>(id)]);
  }
  const auto names = args.axes.empty() ? default_axis_names(mesh_shape.size()) : split_names(args.axes);
  am::mesh m(create_device_mesh(mesh_shape, devices), names);
  return make_named_sharding(m, parse_partition_spec(args.spec));
}

void add_visualize_command(CLI::App& app) {
  auto args = std::make_shared<visualize_args>();
  auto* cmd = app.add_subcommand("visualize",
                                 "Draw how an array is laid out over a mesh of virtual CPU devices "
                                 "(jax.debug.visualize_array_sharding; no runtime is started)");
  add_sharding_args(*cmd, args->sharding);
  cmd->add_option("--platform", args->platform, "Platform shown in the labels, e.g. TPU (default CPU)");
  cmd->callback([args] {
    const auto sharding = make_sharding(args->sharding);
    visualize_options options;
    options.platform = args->platform;
    const auto picture = visualize_array_sharding(args->sharding.shape, *sharding, options);
    std::fwrite(picture.data(), 1, picture.size(), stdout);
  });
}

} // namespace am::tools
