#include "devices/detail/buffer_pool.hpp"

#include "actormesh/actors/errors.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <string>

namespace am::detail {

namespace {

constexpr std::size_t alignment = 64;

/// Free blocks beyond this (and beyond the bytes in use) are given back on the next miss, so a
/// changing mix of sizes cannot pile up unused memory.
constexpr std::uint64_t reserve_slack = std::uint64_t{64} << 20;

void raise_peak(std::atomic<std::uint64_t>& peak, std::uint64_t value) noexcept {
  auto seen = peak.load(std::memory_order_relaxed);
  while (seen < value && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

} // namespace

buffer_pool::buffer_pool(int device_id, std::uint64_t limit) : device_id_(device_id), limit_(limit) {}

buffer_pool::~buffer_pool() {
  trim();
}

std::size_t buffer_pool::size_class(std::size_t bytes) noexcept {
  if (bytes <= 256)
    return bytes <= alignment ? alignment : (bytes + alignment - 1) / alignment * alignment;
  auto width = std::bit_width(bytes - 1); // 2^width >= bytes
  std::size_t step = std::max(alignment, std::size_t{1} << (width - 4));
  return (bytes + step - 1) / step * step;
}

void* buffer_pool::system_allocate(std::size_t capacity) noexcept {
  return std::aligned_alloc(alignment, capacity);
}

pool_block buffer_pool::allocate(std::size_t bytes) {
  auto capacity = size_class(bytes);
  auto fail = [&] {
    throw resource_exhausted(bytes, "CpuDevice(id=" + std::to_string(device_id_) + ")");
  };
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (auto it = free_.find(capacity); it != free_.end() && !it->second.empty()) {
      void* data = it->second.back();
      it->second.pop_back();
      reserved_.fetch_sub(capacity, std::memory_order_relaxed);
      auto now = in_use_.fetch_add(capacity, std::memory_order_relaxed) + capacity;
      raise_peak(peak_, now);
      allocs_.fetch_add(1, std::memory_order_relaxed);
      return {data, capacity};
    }
    auto in_use = in_use_.load(std::memory_order_relaxed);
    auto reserved = reserved_.load(std::memory_order_relaxed);
    if (limit_ != 0 && in_use + reserved + capacity > limit_)
      trim_locked();
    else if (reserved > reserve_slack && reserved > in_use)
      trim_locked();
    if (limit_ != 0 && in_use + capacity > limit_)
      fail();
    // Count the block before it exists so that concurrent allocations respect the limit too.
    in_use_.fetch_add(capacity, std::memory_order_relaxed);
  }
  void* data = system_allocate(capacity);
  if (data == nullptr) {
    trim();
    data = system_allocate(capacity);
  }
  if (data == nullptr) {
    in_use_.fetch_sub(capacity, std::memory_order_relaxed);
    fail();
  }
  raise_peak(peak_, in_use_.load(std::memory_order_relaxed));
  allocs_.fetch_add(1, std::memory_order_relaxed);
  system_allocs_.fetch_add(1, std::memory_order_relaxed);
  return {data, capacity};
}

void buffer_pool::release(pool_block block) noexcept {
  if (block.data == nullptr)
    return;
  std::lock_guard<std::mutex> guard(mutex_);
  in_use_.fetch_sub(block.capacity, std::memory_order_relaxed);
  try {
    free_[block.capacity].push_back(block.data);
    reserved_.fetch_add(block.capacity, std::memory_order_relaxed);
  } catch (...) { // no memory for the list itself: give the block back
    std::free(block.data);
  }
}

void buffer_pool::trim() noexcept {
  std::lock_guard<std::mutex> guard(mutex_);
  trim_locked();
}

void buffer_pool::trim_locked() noexcept {
  for (auto& [capacity, blocks] : free_) {
    for (void* p : blocks)
      std::free(p);
    reserved_.fetch_sub(capacity * blocks.size(), std::memory_order_relaxed);
    blocks.clear();
  }
  free_.clear();
}

memory_stats buffer_pool::stats() const noexcept {
  memory_stats s;
  s.bytes_in_use = in_use_.load(std::memory_order_relaxed);
  s.peak_bytes_in_use = peak_.load(std::memory_order_relaxed);
  s.bytes_limit = limit_;
  s.bytes_reserved = reserved_.load(std::memory_order_relaxed);
  s.num_allocs = allocs_.load(std::memory_order_relaxed);
  return s;
}

} // namespace am::detail
