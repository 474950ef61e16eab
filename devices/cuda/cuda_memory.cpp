#include "devices/cuda/cuda_memory.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/cuda/cuda_check.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>

namespace am::detail {

namespace {

constexpr int max_ordinals = 64;
std::array<std::atomic<std::uint64_t>, max_ordinals> allocations{};

device cuda_device_named(int ordinal) {
  // Used in error texts only: the global id is not known here, the ordinal is what CUDA calls it.
  return device{ordinal, 0, platform::cuda, ordinal};
}

void throw_if(cudaError_t err, const char* what, int ordinal) {
  if (err != cudaSuccess)
    cuda::check(err, what, cuda_device_named(ordinal));
}

std::uint64_t pool_attribute(cudaMemPool_t pool, cudaMemPoolAttr attr, int ordinal) {
  std::uint64_t value = 0; // the cuuint64_t attributes
  throw_if(cudaMemPoolGetAttribute(pool, attr, &value), "cudaMemPoolGetAttribute", ordinal);
  return value;
}

} // namespace

void configure_cuda_memory_pool(int ordinal) {
  cudaMemPool_t pool = nullptr;
  throw_if(cudaDeviceGetDefaultMemPool(&pool, ordinal), "cudaDeviceGetDefaultMemPool", ordinal);
  std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
  throw_if(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
           "cudaMemPoolSetAttribute(ReleaseThreshold)", ordinal);
}

memory_stats cuda_memory_stats(int ordinal) {
  cudaMemPool_t pool = nullptr;
  throw_if(cudaDeviceGetDefaultMemPool(&pool, ordinal), "cudaDeviceGetDefaultMemPool", ordinal);
  memory_stats stats;
  auto used = pool_attribute(pool, cudaMemPoolAttrUsedMemCurrent, ordinal);
  auto reserved = pool_attribute(pool, cudaMemPoolAttrReservedMemCurrent, ordinal);
  stats.bytes_in_use = used;
  stats.peak_bytes_in_use = pool_attribute(pool, cudaMemPoolAttrUsedMemHigh, ordinal);
  stats.bytes_reserved = reserved > used ? reserved - used : 0;
  std::size_t total = 0;
  {
    cuda::scoped_device on(ordinal);
    std::size_t free_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
      cudaGetLastError();
      total = 0;
    }
  }
  stats.bytes_limit = total;
  if (ordinal >= 0 && ordinal < max_ordinals)
    stats.num_allocs = allocations[static_cast<std::size_t>(ordinal)].load(std::memory_order_relaxed);
  return stats;
}

void count_cuda_allocation(int ordinal) noexcept {
  if (ordinal >= 0 && ordinal < max_ordinals)
    allocations[static_cast<std::size_t>(ordinal)].fetch_add(1, std::memory_order_relaxed);
}

void cuda_copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0)
    return;
  cudaPointerAttributes attrs{};
  int ordinal = 0;
  if (cudaPointerGetAttributes(&attrs, src) == cudaSuccess && attrs.device >= 0)
    ordinal = attrs.device;
  cudaGetLastError();
  cuda::scoped_device on(ordinal);
  throw_if(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy (device to host)", ordinal);
}

} // namespace am::detail
