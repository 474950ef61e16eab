/// The element-wise arithmetic of collectives on host buffers: the reduce functions Gloo calls and
/// the local half of reduce_scatter (with the float32 accumulation of float16/bfloat16). Semantics are
/// those of am::reduce_op (devices/collectives/reduce_op.hpp).
#pragma once

#include "actormesh/actors/dtype.hpp"
#include "actormesh/devices/collectives/reduce_op.hpp"

#include <cstddef>

namespace am::detail {

/// `out[i] = op(a[i], b[i])` for `n` elements; `out` may be `a` or `b`. The signature is Gloo's
/// AllreduceOptions::Func (void pointers, element count).
using reduce_kernel = void (*)(void* out, const void* a, const void* b, std::size_t n);

/// Throws am::type_error when `op` cannot reduce `t` (mean of integers or bool, sum of bool),
/// with a message saying what to do instead.
void check_reducible(dtype t, reduce_op op);

/// True when `op` on `t` is computed in float32 and rounded once at the end: sums and means of
/// float16 and bfloat16, so that results match numpy's float32 sum then cast (reduce_blocks
/// does it; no pairwise kernel exists for them).
bool accumulates_in_float(dtype t, reduce_op op) noexcept;

/// The kernel combining two buffers of `t` with `op` (sum, max or min; mean is a sum followed by
/// divide_in_place). Not for the float-accumulated cases above.
reduce_kernel kernel_for(dtype t, reduce_op op);

/// Divides `n` float32 or float64 elements by `divisor` in place (the mean after a sum).
void divide_in_place(dtype t, void* data, std::size_t n, int divisor);

/// `out[j] = op(blocks[0][j], blocks[1][j], ...)` over `nblocks` consecutive blocks of `n`
/// elements, combined in block order (so a float sum is numpy's sequential sum over the blocks);
/// mean divides by `nblocks`; float16/bfloat16 sums accumulate in float and round once.
/// `out` must not overlap `blocks`.
void reduce_blocks(dtype t, reduce_op op, const void* blocks, int nblocks, std::size_t n, void* out);

} // namespace am::detail
