/// PositionalSharding: an N-d array of device sets (JAX's `jax.sharding.PositionalSharding`, removed
/// from JAX in 2025 but used throughout the seed tutorial).
///
/// Built from devices in some order (their *positions*), it behaves like a numpy array whose elements
/// are sets of devices: reshape it to the array's rank and shape, transpose it, and `replicate` along
/// an axis to take the union of the sets there. An array of shape S with a sharding of shape T is cut
/// into T[d] blocks along dimension d; the devices of a set all hold the same block.
#ifndef ACTORMESH_SHARDING_POSITIONAL_SHARDING_HPP
#define ACTORMESH_SHARDING_POSITIONAL_SHARDING_HPP

#include "actormesh/sharding/mesh.hpp"
#include "actormesh/sharding/sharding.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace am {

/// N-d array of device sets; immutable value type, every operation returns a new sharding.
class positional_sharding final : public sharding {
public:
  /// `PositionalSharding(devices)`: shape = grid shape, each element the set of its one device.
  /// Throws am::value_error for an empty grid.
  explicit positional_sharding(const device_grid& devices);

  /// A 1-d sharding over `devices`, in that order.
  explicit positional_sharding(std::vector<device> devices);

  /// The shape of the array of sets.
  const std::vector<std::int64_t>& shape() const noexcept { return shape_; }

  /// Its rank.
  std::size_t ndim() const noexcept { return shape_.size(); }

  /// numpy's reshape (one entry may be -1); numpy's errors.
  positional_sharding reshape(std::vector<std::int64_t> shape) const;

  /// numpy's transpose: `axes` a permutation of 0..ndim-1 (negative counts from the end); empty
  /// reverses the axes (`.T`). numpy's errors.
  positional_sharding transpose(std::vector<int> axes = {}) const;

  /// Union of the sets along `axis` (negative counts from the end), or along every axis when none;
  /// with `keepdims` (the default, unlike numpy) the reduced axes stay with size 1.
  positional_sharding replicate(std::optional<int> axis = std::nullopt, bool keepdims = true) const;

  /// The devices of each element, row-major; each set in position order.
  std::vector<std::vector<device>> device_sets() const;

  /// The devices in the order given at construction (positions).
  const std::vector<device>& device_assignment() const noexcept override { return devices_; }

  /// Throws unless `ndim` equals the sharding's rank or the sharding is fully replicated ("Sharding
  /// PositionalSharding(...) is only valid for values of rank 2, but was applied to a value of rank 1").
  void check_rank(std::size_t ndim) const override;

  /// Dimension d is cut shape()[d] times; a position's tile is the element holding it.
  tile_layout layout(std::size_t ndim) const override;

  /// True when the shape is all ones (one set holding every device).
  bool is_fully_replicated() const override;

  /// numpy-style repr, as in the seed: `PositionalSharding([[{CPU 0} {CPU 1}]\n [...]])`, each set
  /// shown as the platform in upper case and its sorted device ids.
  std::string to_string() const override;

  /// Same devices in the same order and the same sets in the same shape.
  friend bool operator==(const positional_sharding& a, const positional_sharding& b) {
    return a.devices_ == b.devices_ && a.shape_ == b.shape_ && a.cells_ == b.cells_;
  }

private:
  positional_sharding(std::vector<device> devices, std::vector<std::int64_t> shape,
                      std::vector<std::vector<int>> cells);

  std::vector<device> devices_;
  std::vector<std::int64_t> shape_;
  std::vector<std::vector<int>> cells_; // row-major; each a sorted list of positions into devices_
};

/// `std::make_shared<const positional_sharding>(s)`: hand a positional sharding to the APIs that take
/// a sharding_ptr.
std::shared_ptr<const positional_sharding> share(positional_sharding s);

} // namespace am

#endif // ACTORMESH_SHARDING_POSITIONAL_SHARDING_HPP
