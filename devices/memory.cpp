#include "actormesh/devices/memory.hpp"

#include "devices/detail/runtime_impl.hpp"

namespace am {

memory_stats get_memory_stats(const device& d) {
  return detail::current_runtime()->device_memory_stats(d.id);
}

} // namespace am
