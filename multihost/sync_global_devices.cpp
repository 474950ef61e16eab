#include "actormesh/multihost/multihost_utils.hpp"

#include "multihost/detail/crc32.hpp"

namespace am::multihost {

void sync_global_devices(const std::string& name) {
  // JAX: assert_equal(np.uint32(zlib.crc32(name)), ...); uint32 values are held in int64 here.
  const std::int64_t h = detail::crc32(name);
  assert_equal(h, "sync_global_devices name mismatch ('" + name + "')");
}

} // namespace am::multihost
