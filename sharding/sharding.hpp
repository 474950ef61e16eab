/// The Sharding interface (`jax.sharding.Sharding`): how an array is laid out over devices.
///
/// A sharding is immutable and shared: hold it by `std::shared_ptr<const sharding>` (`sharding_ptr`).
/// Each kind (named, positional, single device) says which devices it spans, in which order, and how
/// it cuts an array of a given rank into tiles (`layout`); the index maths common to all kinds
/// (shard shape, device -> index map, replica ids, equivalence) is built here on that.
#ifndef ACTORMESH_SHARDING_SHARDING_HPP
#define ACTORMESH_SHARDING_SHARDING_HPP

#include "actormesh/actors/device_info.hpp"
#include "actormesh/sharding/index_map.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace am {

/// One device's part of an array under a sharding: which block it holds, and which copy it is.
struct shard_placement {
  /// The device holding the block.
  am::device device;
  /// The block.
  shard_index index;
  /// 0 for the first device (in assignment order) holding this block, 1 for the next, ...
  int replica_id = 0;

  /// Same device, block and replica id.
  friend bool operator==(const shard_placement&, const shard_placement&) = default;
};

/// Abstract base of every sharding kind.
class sharding {
public:
  virtual ~sharding() = default;

  /// The devices in the sharding's own order (mesh-flat order for a NamedSharding, the order given
  /// for a PositionalSharding); replica ids count in this order.
  virtual const std::vector<device>& device_assignment() const noexcept = 0;

  /// Throws am::value_error (JAX's wording) when arrays of rank `ndim` cannot use this sharding.
  virtual void check_rank(std::size_t ndim) const = 0;

  /// The tile layout for arrays of rank `ndim` (tile coordinates per position of
  /// device_assignment()); throws like check_rank.
  virtual tile_layout layout(std::size_t ndim) const = 0;

  /// True when every device holds the whole array.
  virtual bool is_fully_replicated() const = 0;

  /// JAX-like repr: `NamedSharding(mesh=Mesh('x': 4, 'y': 2), spec=P('x', 'y'))`.
  virtual std::string to_string() const = 0;

  /// The set of devices spanned, sorted by id, without repeats.
  std::vector<device> device_set() const;

  /// Number of distinct devices.
  std::size_t num_devices() const { return device_set().size(); }

  /// True when every device belongs to process `process_index`.
  bool is_fully_addressable(int process_index) const;

  /// JAX's check_compatible_aval: throws when `shape` has a rank this sharding cannot take.
  void check_compatible(const std::vector<std::int64_t>& shape) const { check_rank(shape.size()); }

  /// The shape of each shard; throws am::indivisible_error when a dimension does not divide.
  std::vector<std::int64_t> shard_shape(const std::vector<std::int64_t>& shape) const;

  /// Device -> the block it holds, in device-id order (JAX's devices_indices_map as a list).
  std::vector<std::pair<device, shard_index>> devices_indices_map(const std::vector<std::int64_t>& shape) const;

  /// Device, block and replica id for every device, in device-id order.
  std::vector<shard_placement> shard_placements(const std::vector<std::int64_t>& shape) const;

  /// The replica id of `d` for arrays of `shape`; throws am::value_error if `d` is not in the sharding.
  int replica_id(const device& d, const std::vector<std::int64_t>& shape) const;

  /// True when both shardings give every device the same block of any array of rank `ndim` and span
  /// the same devices (JAX compares the lowered shardings; we compare the device -> index maps).
  /// False when either cannot take rank `ndim`.
  bool is_equivalent_to(const sharding& other, std::size_t ndim) const;
};

/// How shardings are held and passed around.
using sharding_ptr = std::shared_ptr<const sharding>;

} // namespace am

#endif // ACTORMESH_SHARDING_SHARDING_HPP
