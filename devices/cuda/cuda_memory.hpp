/// Memory of CUDA devices as the rest of the runtime sees it, in plain C++ (no CUDA headers):
/// pool set-up, statistics for `am::get_memory_stats` (devices/memory.cpp calls
/// `cuda_memory_stats`), and copies that the CPU path can use to read CUDA shards.
#pragma once

#include "actormesh/devices/memory.hpp"

#include <cstddef>
#include <cstdint>

namespace am::detail {

/// Configures the default memory pool of CUDA device `ordinal`, which cudaMallocAsync draws from:
/// its release threshold is set to the maximum, so freed memory stays in the pool and is reused
/// instead of going back to the driver at every synchronization. Throws am::runtime_error.
void configure_cuda_memory_pool(int ordinal);

/// Statistics of CUDA device `ordinal` from its memory pool (cudaMemPoolGetAttribute):
/// bytes_in_use = used memory, peak_bytes_in_use = the used high-water mark, bytes_reserved =
/// memory the pool holds beyond what is in use, bytes_limit = the device's total memory,
/// num_allocs = buffers this process allocated there. Callable from any thread; throws
/// am::runtime_error when the CUDA runtime cannot answer.
memory_stats cuda_memory_stats(int ordinal);

/// Counts one allocation of CUDA device `ordinal` for `cuda_memory_stats` (buffers call it).
void count_cuda_allocation(int ordinal) noexcept;

/// Copies `bytes` from CUDA device memory `src` to host memory `dst`, synchronously (the producer
/// of `src` has finished: its shard future resolved). For the CPU path when a program on a CPU
/// device reads a shard that lives on a GPU. Throws am::runtime_error.
void cuda_copy_to_host(void* dst, const void* src, std::size_t bytes);

} // namespace am::detail
