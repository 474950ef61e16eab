// `actormesh shards`: lists, for every device, the block of the array it holds under a NamedSharding
// and its replica id; pure index maths over virtual CPU devices, no runtime is started.
#include "tools/commands.hpp"

#include "sharding/detail/py_format.hpp"
#include "actormesh/sharding/named_sharding.hpp"

#include <fmt/core.h>

#include <ostream>

namespace am::tools {

namespace {

struct shards_args {
  sharding_args sharding;
  bool json = false;
};

std::string json_line(const std::vector<std::int64_t>& shard_shape, const std::vector<shard_placement>& shards) {
  std::string out = "{\"shard_shape\":[";
  for (std::size_t i = 0; i < shard_shape.size(); ++i)
    out += (i > 0 ? "," : "") + std::to_string(shard_shape[i]);
  out += "],\"devices\":[";
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const auto& s = shards[k];
    out += (k > 0 ? "," : "");
    out += "{\"id\":" + std::to_string(s.device.id) + ",\"index\":[";
    for (std::size_t d = 0; d < s.index.size(); ++d)
      out += (d > 0 ? "," : "") + ("[" + std::to_string(s.index[d].start) + "," + std::to_string(s.index[d].stop) + "]");
    out += "],\"replica_id\":" + std::to_string(s.replica_id) + "}";
  }
  return out + "]}";
}

void print_table(std::ostream& out, const named_sharding& sharding, const std::vector<std::int64_t>& shape,
                 const std::vector<std::int64_t>& shard_shape, const std::vector<shard_placement>& shards) {
  out << sharding.to_string() << '\n';
  out << fmt::format("array shape {}, shard shape {}\n", detail::py_int_tuple(shape), detail::py_int_tuple(shard_shape));
  out << fmt::format("{:<18} {:<24} {}\n", "device", "index", "replica_id");
  for (const auto& s : shards)
    out << fmt::format("{:<18} {:<24} {}\n", am::to_string(s.device), am::to_string(s.index), s.replica_id);
}

} // namespace

void add_shards_command(CLI::App& app, std::ostream& out) {
  auto args = std::make_shared<shards_args>();
  auto* cmd = app.add_subcommand("shards",
                                 "List the block and replica id each device holds under a NamedSharding "
                                 "(no runtime is started)");
  add_sharding_args(*cmd, args->sharding);
  cmd->add_flag("--json", args->json, "Print one JSON line instead of a table");
  cmd->callback([args, &out] {
    const auto request = parse_sharding_args(args->sharding);
    const auto shard_shape = request.sharding->shard_shape(request.shape);
    const auto shards = request.sharding->shard_placements(request.shape);
    if (args->json)
      out << json_line(shard_shape, shards) << '\n';
    else
      print_table(out, *request.sharding, request.shape, shard_shape, shards);
  });
}

} // namespace am::tools
