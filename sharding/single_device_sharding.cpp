#include "actormesh/sharding/single_device_sharding.hpp"

#include <map>
#include <mutex>
#include <tuple>

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
  // One object per device: plans are cached by their inputs' sharding objects, so arrays put on
  // the same device call by call (device_put(x, d), host arguments of jit) share cached plans.
  static std::mutex mutex;
  static std::map<std::tuple<int, int, platform, int>, std::shared_ptr<const single_device_sharding>> made;
  std::lock_guard<std::mutex> guard(mutex);
  auto& s = made[{d.id, d.process_index, d.platform, d.local_ordinal}];
  if (!s)
    s = std::make_shared<const single_device_sharding>(d);
  return s;
}

} // namespace am
