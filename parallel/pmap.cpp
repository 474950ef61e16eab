#include "actormesh/parallel/pmap.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/sharding/array.hpp"

namespace am {

array device_put(const host_array& data, const std::vector<device>& devices) {
  if (devices.empty())
    throw value_error("device_put to a list of devices needs at least one device");
  if (data.ndim() == 0 || data.shape()[0] != static_cast<std::int64_t>(devices.size()))
    throw value_error("device_put to a list of " + std::to_string(devices.size())
                      + " devices needs a leading axis of that size, got shape " + shape_to_string(data.shape()));
  return device_put(data, detail::stacked_layout(devices, ""));
}

} // namespace am
