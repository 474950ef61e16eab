/// The memory pool of one CPU device (doc/architecture.md, "CPU programs"): a fresh page costs a
/// page fault when first touched, so freed blocks go back to size-class free lists and are handed
/// out again. Blocks are returned by buffer destructors from any thread; the pool is shared by its
/// device and by every buffer it handed out, so it outlives the runtime when buffers do.
#pragma once

#include "actormesh/devices/memory.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace am::detail {

/// A block of host memory from a pool: 64-byte aligned, `capacity` bytes (the size class).
struct pool_block {
  void* data = nullptr;
  std::size_t capacity = 0;
};

/// Size-class free lists with statistics and an optional limit. Thread-safe.
class buffer_pool {
public:
  /// A pool for CPU device `device_id`; `limit` bytes in use at most (0: no limit).
  buffer_pool(int device_id, std::uint64_t limit);
  ~buffer_pool();

  buffer_pool(const buffer_pool&) = delete;
  buffer_pool& operator=(const buffer_pool&) = delete;

  /// A block of at least `bytes` bytes, from the free lists when one of its class is there. Over the
  /// limit (after trimming the free lists) or when the system has no memory: am::out_of_memory_error
  /// "RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes on CpuDevice(id=K)".
  pool_block allocate(std::size_t bytes);

  /// Returns a block to its free list (or to the system when the pool holds too much). Any thread.
  void release(pool_block block) noexcept;

  /// Gives every free block back to the system.
  void trim() noexcept;

  /// The statistics now (atomics: exact while no other thread allocates or frees).
  memory_stats stats() const noexcept;

  /// Blocks taken from the system (not from the free lists) so far.
  std::uint64_t system_allocations() const noexcept { return system_allocs_.load(std::memory_order_relaxed); }

  /// The id of the device the pool belongs to.
  int device_id() const noexcept { return device_id_; }

  /// The size class of a request: 64-byte multiples up to 256 bytes, then 8 classes per power of two.
  static std::size_t size_class(std::size_t bytes) noexcept;

private:
  void trim_locked() noexcept;
  void* system_allocate(std::size_t capacity) noexcept;

  int device_id_;
  std::uint64_t limit_;
  std::mutex mutex_;
  std::unordered_map<std::size_t, std::vector<void*>> free_; ///< by capacity
  std::atomic<std::uint64_t> in_use_{0};
  std::atomic<std::uint64_t> peak_{0};
  std::atomic<std::uint64_t> reserved_{0};
  std::atomic<std::uint64_t> allocs_{0};
  std::atomic<std::uint64_t> system_allocs_{0};
};

} // namespace am::detail
