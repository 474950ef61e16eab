/// Matrix products of float32 and float64 on CPU devices through a BLAS (OpenBLAS from Debian,
/// cblas_sgemm / cblas_dgemm), the library speed of issue 11 instead of the hand-written loop.
/// The calls of all the process's CPU devices take turns, each using every core: 8 devices sharing
/// 2 cores never run 8 x 2 BLAS threads at once, and one device alone gets all the cores.
/// doc/architecture.md, "CPU programs". Internal.
#pragma once

#include "actors/dtype.hpp"

#include <cstdint>

namespace am::detail {

/// C (m x n) = A (m x k) x B (k x n), row-major and dense, when `t` is float32 or float64; returns
/// false (doing nothing) for other dtypes, which keep the hand-written kernel.
bool blas_dot(dtype t, const void* a, const void* b, void* c, std::int64_t m, std::int64_t k, std::int64_t n);

} // namespace am::detail
