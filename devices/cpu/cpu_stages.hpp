/// The non-elementwise stages of a CPU program that do not fuse: reductions and concatenation
/// (dot goes through the instruction set's kernel table). Each works on whole buffers.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/opcode.hpp"
#include "devices/cpu/cpu_kernels.hpp"

#include <cstdint>
#include <vector>

namespace am::detail {

/// reduce_sum / reduce_max / reduce_min of `in` over `axes` (sorted) into `out` (the kept dims).
/// Sums accumulate in the element type (wrapping for integers; bool: any nonzero), in float for
/// float16/bfloat16; max/min propagate NaN. Empty reductions give 0, and for max (min) the lowest
/// (highest) value: -inf (+inf) for floats, the type's minimum (maximum) for integers, false (true).
/// float32/float64 run through the vector kernels of `isa` where it has them (AVX2, AVX-512): a
/// reduced run of consecutive elements is summed pairwise, reduced rows are combined into the kept
/// ones in order. The baseline sums a run in 16 fixed lanes.
void reduce(opcode op, const buffer& in, buffer& out, const std::vector<std::int64_t>& axes,
            cpu_isa isa = preferred_isa());

/// Joins `ins` along `axis` into `out`.
void concatenate(const std::vector<const buffer*>& ins, buffer& out, std::int64_t axis);

} // namespace am::detail
