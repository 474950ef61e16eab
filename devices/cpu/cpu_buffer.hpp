/// Host memory of a CPU device's shard: a block of the device's pool (64-byte aligned, so vectorized
/// loops can use aligned loads), returned to the pool when the last handle goes, from any thread.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "devices/detail/buffer_pool.hpp"

#include <memory>

namespace am::detail {

/// A shard in host memory, owned by the CPU device whose pool it came from.
class cpu_buffer final : public buffer {
public:
  /// Takes uninitialized memory from `pool`; throws am::out_of_memory_error when the device is out of
  /// memory.
  cpu_buffer(am::dtype type, shape_t shape, std::shared_ptr<buffer_pool> pool);
  ~cpu_buffer() override;

  void* data() noexcept override { return block_.data; }
  bool host_accessible() const noexcept override { return true; }

private:
  std::shared_ptr<buffer_pool> pool_;
  pool_block block_;
};

/// Another buffer's memory seen with a different shape of the same size (a zero-copy reshape).
class cpu_buffer_view final : public buffer {
public:
  /// Views `base` (kept alive) as `shape`; the element counts must match.
  cpu_buffer_view(buffer_ref base, shape_t shape);

  void* data() noexcept override { return base_->data(); }
  bool host_accessible() const noexcept override { return base_->host_accessible(); }

private:
  buffer_ref base_;
};

/// A new pooled CPU buffer of the given type, as a shared handle.
buffer_ref make_cpu_buffer(am::dtype type, shape_t shape, const std::shared_ptr<buffer_pool>& pool);

/// `base` with `shape` (the same buffer when the shape is already that).
buffer_ref reshape_view(const buffer_ref& base, const shape_t& shape);

} // namespace am::detail
