// Shared pieces of the precompiled .cu kernels: launch geometry, the grid-stride loop and the
// compile-time dtype dispatch. C++17 (nvcc), included by the .cu files only.
#pragma once

#include "actormesh/actors/dtype.hpp"
#include "devices/cuda/device_math.cuh"
#include "devices/cuda/dtype_codes.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace am::detail::cuda {

/// Threads per block of every elementwise kernel.
constexpr int block_size = 256;

/// Blocks for a grid-stride loop over `n` elements (at least one, at most 65535).
inline int grid_for(std::int64_t n) {
  std::int64_t blocks = (n + block_size - 1) / block_size;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

inline cudaStream_t as_stream(void* s) {
  return static_cast<cudaStream_t>(s);
}

/// The first index of this thread in a grid-stride loop.
__device__ __forceinline__ amd::i64 first_index() {
  return static_cast<amd::i64>(blockIdx.x) * blockDim.x + threadIdx.x;
}

/// The step of a grid-stride loop.
__device__ __forceinline__ amd::i64 grid_step() {
  return static_cast<amd::i64>(gridDim.x) * blockDim.x;
}

/// Storage and compute types of dtype code D.
template <int D> using storage_t = typename amd::dt<D>::S;
template <int D> using compute_t = typename amd::dt<D>::C;

} // namespace am::detail::cuda
