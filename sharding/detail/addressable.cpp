#include "sharding/detail/addressable.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/runtime_context.hpp"
#include "actormesh/devices/runtime.hpp"

namespace am::detail {

bool is_addressable(const device& d) { return current_context()->drives(d); }

bool drives_every_device() { return current_context()->drives_every_device(); }

shard_future remote_shard(const device& d) {
  current_context()->check_known(d); // a made-up "remote" descriptor is refused like a local one
  promise<buffer_ref> p;
  p.set_error(std::make_exception_ptr(runtime_error(
    "The shard on " + to_string(d) + " lives in process " + std::to_string(d.process_index)
    + " and is not addressable from process " + std::to_string(process_index())
    + ": use addressable_shards() for this process's part")));
  return p.get_future();
}

} // namespace am::detail
