#include "devices/remote/remote_shard.hpp"

namespace am::detail::remote {

shard_state::~shard_state() {
  if (handed_over_.load(std::memory_order_acquire))
    return;
  if (auto r = releaser_.lock())
    r->release(where_);
}

remote_buffer::~remote_buffer() {
  if (auto r = releaser_.lock())
    r->release(where_);
}

std::optional<location> location_of(const shard_future& f) {
  if (!f.valid())
    return std::nullopt;
  if (auto* state = dynamic_cast<const shard_state*>(f.shared_state().get()))
    return state->where();
  // A worker's buffer wrapped in another future (a value taken out and put back).
  if (f.ready() && !f.shared_state()->error())
    if (auto* buf = dynamic_cast<const remote_buffer*>(f.get().get()))
      return buf->where();
  return std::nullopt;
}

} // namespace am::detail::remote
