/// The precompiled CUDA kernels of the device path behind a plain C++ interface (no CUDA headers),
/// so the rest of the runtime compiles as C++20 while the kernels compile as CUDA C++17. Each call
/// enqueues work on `stream` and returns at once; launch errors are read with last_launch_error().
/// Elementwise semantics are those of device_math.cuh (shared with the fused kernels).
#pragma once

#include "actormesh/actors/dtype.hpp"
#include "actormesh/actors/opcode.hpp"

#include <cstddef>
#include <cstdint>

namespace am::detail::cuda {

/// Opaque CUDA stream (a cudaStream_t).
using stream_handle = void*;

/// The largest rank the layouts below describe.
inline constexpr int layout_rank = 8;

// ---- elementwise (cuda_kernels.cu, cuda_elementwise.cu) -------------------------------------------

/// Fills `n` elements of `dst` with `value` converted to `type`.
void fill(void* dst, dtype type, std::int64_t n, double value, stream_handle stream);

/// Writes the row-major element index, converted to `type`.
void iota(void* dst, dtype type, std::int64_t n, stream_handle stream);

/// Converts `n` elements from `from` to `to`, with the CPU path's rules.
void convert(void* dst, dtype to, const void* src, dtype from, std::int64_t n, stream_handle stream);

/// Runs a one-operand elementwise opcode (neg .. square) on operands and result of `type`.
void unary(opcode op, void* dst, const void* x, dtype type, std::int64_t n, stream_handle stream);

/// Runs a two-operand opcode (add .. power) on operands and result of `type`.
void binary(opcode op, void* dst, const void* x, const void* y, dtype type, std::int64_t n,
            stream_handle stream);

/// Runs a comparison of operands of `type`; `dst` holds bool.
void compare(opcode op, void* dst, const void* x, const void* y, dtype type, std::int64_t n,
             stream_handle stream);

/// `dst = pred ? on_true : on_false` for `pred` of bool and the others of `type`.
void select(void* dst, const void* pred, const void* on_true, const void* on_false, dtype type,
            std::int64_t n, stream_handle stream);

/// Where a block of a random array lies in the global array: element i (row-major in `local`)
/// has global index base + sum over dims of coordinate * global_strides.
struct random_layout {
  std::uint64_t key = 0;
  std::int64_t base = 0;
  int rank = 0;
  std::int64_t local[layout_rank] = {};
  std::int64_t global_strides[layout_rank] = {};
  int ranged = 0;   ///< 1 for a float uniform with JAX's range: max(low, u * span + low)
  double low = 0;   ///< minval, rounded to the dtype
  double span = 1;  ///< maxval - minval, computed in the dtype
};

/// random_uniform / random_normal values of a float `type` (devices/detail/random_counter.hpp).
void random(opcode op, void* dst, dtype type, std::int64_t n, const random_layout& layout,
            stream_handle stream);

// ---- structural (cuda_copy.cu) ---------------------------------------------------------------------

/// A strided copy: for every index c of `shape`, dst[dst_offset + c . dst_strides] =
/// src[src_offset + c . src_strides] (in elements). Broadcast (stride 0), transpose, slice and
/// concatenate are all such copies.
struct copy_layout {
  int rank = 0;
  std::int64_t shape[layout_rank] = {};
  std::int64_t src_strides[layout_rank] = {};
  std::int64_t dst_strides[layout_rank] = {};
  std::int64_t src_offset = 0;
  std::int64_t dst_offset = 0;
};

/// Copies elements of `element_size` bytes (1, 2, 4 or 8) as `layout` says.
void strided_copy(void* dst, const void* src, std::size_t element_size, const copy_layout& layout,
                  stream_handle stream);

// ---- reductions and contractions (cuda_reduce.cu, cuda_dot.cu) ----------------------------------

/// A reduction seen as kept dims (the result, row-major) times reduced dims, both with the
/// operand's strides in elements.
struct reduce_layout {
  int kept_rank = 0;
  std::int64_t kept_shape[layout_rank] = {};
  std::int64_t kept_strides[layout_rank] = {};
  int reduced_rank = 0;
  std::int64_t reduced_shape[layout_rank] = {};
  std::int64_t reduced_strides[layout_rank] = {};
  std::int64_t outputs = 1; ///< product of kept_shape
  std::int64_t reduced = 1; ///< product of reduced_shape
};

/// reduce_sum / reduce_max / reduce_min. Sums accumulate 16-bit floats and float32 in float,
/// float64 in double, integers wrapping; an empty reduction gives the identity (0, the lowest or
/// the highest value). May allocate a stream-ordered scratch buffer for partial results.
void reduce(opcode op, void* dst, const void* src, dtype type, const reduce_layout& layout,
            stream_handle stream);

/// [m,k] x [k,n] -> [m,n], row-major, accumulating 16-bit floats in float (integers wrap, bool is
/// or-of-ands).
void dot(void* dst, const void* a, const void* b, dtype type, std::int64_t m, std::int64_t k,
         std::int64_t n, stream_handle stream);

/// The last launch error as text, or empty when there was none (clears it).
const char* last_launch_error();

} // namespace am::detail::cuda
