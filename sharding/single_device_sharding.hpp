/// SingleDeviceSharding: the whole array on one device (`jax.sharding.SingleDeviceSharding`).
#ifndef ACTORMESH_SHARDING_SINGLE_DEVICE_SHARDING_HPP
#define ACTORMESH_SHARDING_SINGLE_DEVICE_SHARDING_HPP

#include "actormesh/sharding/sharding.hpp"

#include <memory>

namespace am {

/// Every array of any rank lives whole on one device: what an unsharded value has.
class single_device_sharding final : public sharding {
public:
  /// The sharding that places everything on `d`.
  explicit single_device_sharding(am::device d) : devices_{d} {}

  /// The device.
  const am::device& device() const noexcept { return devices_.front(); }

  /// The one device.
  const std::vector<am::device>& device_assignment() const noexcept override { return devices_; }

  /// Any rank is fine.
  void check_rank(std::size_t) const override {}

  /// One tile, nothing split.
  tile_layout layout(std::size_t ndim) const override;

  /// Always true.
  bool is_fully_replicated() const override { return true; }

  /// `SingleDeviceSharding(device=CpuDevice(id=0))`.
  std::string to_string() const override;

  /// Same device.
  friend bool operator==(const single_device_sharding& a, const single_device_sharding& b) {
    return a.devices_ == b.devices_;
  }

private:
  std::vector<am::device> devices_;
};

/// The sharding of `d` alone: one shared object per device, so that jit's plans, cached by their
/// inputs' sharding objects, are shared by every array placed on that device.
std::shared_ptr<const single_device_sharding> make_single_device_sharding(const am::device& d);

} // namespace am

#endif // ACTORMESH_SHARDING_SINGLE_DEVICE_SHARDING_HPP
