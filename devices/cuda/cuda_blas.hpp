/// Matrix products on CUDA devices through cuBLAS (the toolkit's libcublas, loaded at run time):
/// float32 and float64 in their own precision, float16 and bfloat16 with float accumulation, one
/// strided-batched call for a batched dot, transposed operands as cuBLAS's transpose flags.
/// Integers and bool keep the hand-written kernel of cuda_dot.cu. Each device's handle lives with
/// its stream (device_stream::blas_handle), so every call is ordered on the device's stream. Plain
/// C++ interface (no CUDA headers). Internal.
#pragma once

#include "actormesh/actors/dtype.hpp"
#include "devices/cuda/cuda_buffer.hpp"
#include "devices/detail/dot_geometry.hpp"

#include <cstdint>
#include <vector>

namespace am::detail::cuda {

/// True for the dtypes cuBLAS computes here (float16, bfloat16, float32, float64), when cuBLAS could
/// be loaded (devices/cuda/cublas_loader.hpp).
bool blas_takes(dtype t) noexcept;

/// Enqueues out = x . y on `stream` through cuBLAS; `t` must satisfy blas_takes. Throws
/// am::runtime_error naming cuBLAS's status when a call fails, and am::value_error for dimensions
/// past cuBLAS's int range.
void blas_dot(device_stream& stream, dtype t, const void* x, const void* y, void* out, const dot_geometry& s);

/// Enqueues a dot instruction's product: cuBLAS for the dtypes it takes, the hand-written kernel
/// (one launch per batch row) for integers and bool, which refuse transposed operands.
void run_dot(device_stream& stream, dtype t, const void* x, const void* y, void* out, const dot_geometry& s);

/// Destroys a handle made by device_stream::blas_handle (nothing for nullptr); the stream's
/// destructor calls it.
void destroy_blas_handle(void* handle) noexcept;

} // namespace am::detail::cuda
