/// The non-elementwise stages of a CPU program that do not fuse: reductions and concatenation
/// (dot goes through the instruction set's kernel table). Each works on whole buffers.
#pragma once

#include "actors/buffer.hpp"
#include "actors/opcode.hpp"

#include <cstdint>
#include <vector>

namespace am::detail {

/// reduce_sum / reduce_max / reduce_min of `in` over `axes` (sorted) into `out` (the kept dims).
/// Sums accumulate in the element type (wrapping for integers; bool: any nonzero), in float for
/// float16/bfloat16; max/min propagate NaN. Empty reductions give 0, and for max (min) the lowest
/// (highest) value: -inf (+inf) for floats, the type's minimum (maximum) for integers, false (true).
void reduce(opcode op, const buffer& in, buffer& out, const std::vector<std::int64_t>& axes);

/// Joins `ins` along `axis` into `out`.
void concatenate(const std::vector<const buffer*>& ins, buffer& out, std::int64_t axis);

} // namespace am::detail
