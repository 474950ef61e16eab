#include "actormesh/sharding/sharding.hpp"

#include "actormesh/actors/errors.hpp"

#include <algorithm>
#include <map>

namespace am {

namespace {

// Positions of device_assignment() in device-id order (first occurrence of each id).
std::vector<std::size_t> positions_by_id(const std::vector<device>& assignment) {
  std::vector<std::size_t> order(assignment.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return assignment[a].id < assignment[b].id; });
  order.erase(std::unique(order.begin(), order.end(),
                          [&](std::size_t a, std::size_t b) { return assignment[a].id == assignment[b].id; }),
              order.end());
  return order;
}

} // namespace

std::vector<device> sharding::device_set() const {
  std::vector<device> out;
  for (auto pos : positions_by_id(device_assignment()))
    out.push_back(device_assignment()[pos]);
  return out;
}

bool sharding::is_fully_addressable(int process_index) const {
  const auto& devices = device_assignment();
  return std::all_of(devices.begin(), devices.end(),
                     [&](const device& d) { return d.process_index == process_index; });
}

std::vector<std::int64_t> sharding::shard_shape(const std::vector<std::int64_t>& shape) const {
  return tiled_shard_shape(shape, layout(shape.size()).partitions, to_string());
}

std::vector<std::pair<device, shard_index>>
sharding::devices_indices_map(const std::vector<std::int64_t>& shape) const {
  const auto indices = tile_indices(layout(shape.size()), shape, to_string());
  std::vector<std::pair<device, shard_index>> out;
  for (auto pos : positions_by_id(device_assignment()))
    out.emplace_back(device_assignment()[pos], indices[pos]);
  return out;
}

std::vector<shard_placement> sharding::shard_placements(const std::vector<std::int64_t>& shape) const {
  const auto indices = tile_indices(layout(shape.size()), shape, to_string());
  const auto replicas = replica_ids(indices);
  std::vector<shard_placement> out;
  for (auto pos : positions_by_id(device_assignment()))
    out.push_back({device_assignment()[pos], indices[pos], replicas[pos]});
  return out;
}

int sharding::replica_id(const device& d, const std::vector<std::int64_t>& shape) const {
  for (const auto& p : shard_placements(shape))
    if (p.device.id == d.id)
      return p.replica_id;
  throw value_error(am::to_string(d) + " is not one of the devices of " + to_string());
}

bool sharding::is_equivalent_to(const sharding& other, std::size_t ndim) const {
  tile_layout mine, theirs;
  try {
    mine = layout(ndim);
    theirs = other.layout(ndim);
  } catch (const value_error&) {
    return false;
  }
  if (mine.partitions != theirs.partitions)
    return false;
  auto tiles_by_id = [](const sharding& s, const tile_layout& l) {
    std::map<int, std::vector<std::int64_t>> out;
    const auto& devices = s.device_assignment();
    for (std::size_t i = 0; i < devices.size(); ++i)
      out.emplace(devices[i].id, l.tile_of[i]);
    return out;
  };
  return tiles_by_id(*this, mine) == tiles_by_id(other, theirs);
}

} // namespace am
