#include "actormesh/sharding/named_sharding.hpp"

namespace am {

named_sharding::named_sharding(am::mesh m, partition_spec spec) : mesh_(std::move(m)), spec_(std::move(spec)) {
  check_spec_for_mesh(spec_, mesh_);
}

void named_sharding::check_rank(std::size_t ndim) const {
  check_spec_rank(spec_, ndim, to_string());
}

tile_layout named_sharding::layout(std::size_t ndim) const {
  check_rank(ndim);
  return named_tile_layout(mesh_, spec_, ndim);
}

bool named_sharding::is_fully_replicated() const {
  if (mesh_.size() == 1)
    return true;
  std::int64_t partitions = 1;
  for (const auto& axis : spec_.used_axes())
    partitions *= mesh_.axis_size(axis);
  return partitions == 1;
}

std::string named_sharding::to_string() const {
  return "NamedSharding(mesh=" + mesh_.to_string() + ", spec=" + spec_.to_string() + ")";
}

std::shared_ptr<const named_sharding> make_named_sharding(const am::mesh& m, const partition_spec& spec) {
  return std::make_shared<const named_sharding>(m, spec);
}

} // namespace am
