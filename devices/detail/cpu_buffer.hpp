/// Host memory of a CPU device's shard: 64-byte aligned so vectorized loops can use aligned loads.
#pragma once

#include "actors/buffer.hpp"

namespace am::detail {

/// A shard in host memory, owned by the CPU device that created it.
class cpu_buffer final : public buffer {
public:
  /// Allocates uninitialized memory; throws am::out_of_memory_error when the allocation fails.
  cpu_buffer(am::dtype type, shape_t shape, int device_id);
  ~cpu_buffer() override;

  void* data() noexcept override { return data_; }
  bool host_accessible() const noexcept override { return true; }

private:
  void* data_ = nullptr;
};

/// A new CPU buffer of the given type, as a shared handle.
buffer_ref make_cpu_buffer(am::dtype type, shape_t shape, int device_id);

} // namespace am::detail
