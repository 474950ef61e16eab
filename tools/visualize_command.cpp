// `actormesh visualize`: prints JAX's text picture of how an array of a given shape is laid out by a
// NamedSharding over virtual CPU devices; pure index maths, no runtime is started.
#include "tools/commands.hpp"

#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/visualize.hpp"

#include <ostream>

namespace am::tools {

namespace {

struct visualize_args {
  sharding_args sharding;
  std::string platform;
};

} // namespace

void add_visualize_command(CLI::App& app, std::ostream& out) {
  auto args = std::make_shared<visualize_args>();
  auto* cmd = app.add_subcommand("visualize",
                                 "Draw how an array is laid out over a mesh of virtual CPU devices "
                                 "(jax.debug.visualize_array_sharding; no runtime is started)");
  add_sharding_args(*cmd, args->sharding);
  cmd->add_option("--platform", args->platform, "Platform shown in the labels, e.g. TPU (default CPU)");
  cmd->callback([args, &out] {
    const auto request = parse_sharding_args(args->sharding);
    visualize_options options;
    options.platform = args->platform;
    out << visualize_array_sharding(request.shape, *request.sharding, options);
  });
}

} // namespace am::tools
