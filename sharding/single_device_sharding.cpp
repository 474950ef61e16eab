#include "actormesh/sharding/single_device_sharding.hpp"

namespace am {

tile_layout single_device_sharding::layout(std::size_t ndim) const {
  tile_layout out;
  out.partitions.assign(ndim, 1);
  out.tile_of.assign(1, std::vector<std::int64_t>(ndim, 0));
  return out;
}

std::string single_device_sharding::to_string() const {
  return "SingleDeviceSharding(device=" + am::to_string(devices_.front()) + ")";
}

std::shared_ptr<const single_device_sharding> make_single_device_sharding(const device& d) {
  return std::make_shared<const single_device_sharding>(d);
}

} // namespace am
