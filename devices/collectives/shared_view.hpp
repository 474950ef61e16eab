/// One buffer's memory seen as a shard of another device of the same process: how a collective's
/// replicated result is shared by every local device (one copy of the bytes, not one per device).
#pragma once

#include "actormesh/actors/buffer.hpp"

namespace am::detail {

/// Views `base` (kept alive), from its element `first` on, as a shard of device `device_id` with
/// `shape`. Host memory only: CPU devices read one another's memory directly.
class shared_view final : public buffer {
public:
  /// Throws am::value_error when the view's elements do not lie within `base`'s or `base` is not
  /// host memory.
  shared_view(buffer_ref base, shape_t shape, int device_id, std::size_t first = 0);

  void* data() noexcept override { return static_cast<std::byte*>(base_->data()) + offset_; }
  bool host_accessible() const noexcept override { return true; }

private:
  buffer_ref base_;
  std::size_t offset_; ///< in bytes
};

/// `base` as a shard of `device_id` with `shape` (as many elements): `base` itself when it
/// already is one.
buffer_ref share_with(const buffer_ref& base, const shape_t& shape, int device_id);

} // namespace am::detail
