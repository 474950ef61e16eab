// The hand-written peer of the reduction benchmark: sum / max / min of a row-major float32 matrix
// over all elements, axis 0 or axis 1, with AVX2 (8 lanes, four accumulators) on `threads` threads.
// max and min propagate NaN, as jax.numpy's do.
#pragma once

#include <cstdint>

namespace am::bench {

/// What the reference loop reduces with.
enum class reduce_kind { sum, max, min };

/// Reduces the rows x cols matrix `x` over `axis` (-1: every element, 0: down the columns,
/// 1: along each row) into `out` (1, cols or rows values), splitting the rows over `threads`
/// threads (created per call). The CPU must have AVX2 (reference_reduce_supported()).
void reference_reduce(reduce_kind kind, const float* x, std::int64_t rows, std::int64_t cols, int axis,
                      float* out, int threads);

/// True when this CPU has AVX2 (the loop's instruction set).
bool reference_reduce_supported();

} // namespace am::bench
