#include "devices/cpu/cpu_blas.hpp"

#include <cblas.h>

#include <mutex>

namespace am::detail {

namespace {

/// One BLAS call at a time in the process (see the header): OpenBLAS's own threads use the cores.
std::mutex& blas_turn() {
  static std::mutex m;
  return m;
}

} // namespace

bool blas_dot(dtype t, const void* a, const void* b, void* c, std::int64_t m, std::int64_t k, std::int64_t n) {
  if (t != dtype::float32 && t != dtype::float64)
    return false;
  if (m == 0 || n == 0)
    return true;
  // BLAS takes int dimensions; a shard past them keeps the hand-written kernel.
  constexpr std::int64_t limit = 0x7fffffff;
  if (m > limit || k > limit || n > limit)
    return false;
  auto M = static_cast<int>(m), K = static_cast<int>(k), N = static_cast<int>(n);
  std::lock_guard<std::mutex> turn(blas_turn());
  if (t == dtype::float32)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, static_cast<const float*>(a), K,
                static_cast<const float*>(b), N, 0.0f, static_cast<float*>(c), N);
  else
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, static_cast<const double*>(a), K,
                static_cast<const double*>(b), N, 0.0, static_cast<double*>(c), N);
  return true;
}

} // namespace am::detail
