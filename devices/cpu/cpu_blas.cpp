#include "devices/cpu/cpu_blas.hpp"

#include "devices/cpu/blas_kernels.hpp"
#include "devices/cpu/blas_thread.hpp"
#include "devices/cpu/onednn_sgemm.hpp"
#include "devices/detail/dot_geometry.hpp"

#include <cblas.h>

#include <cstring>
#include <type_traits>

namespace am::detail {

namespace {

constexpr std::int64_t blas_limit = 0x7fffffff; // BLAS takes int dimensions

/// The products through BLAS, one call per batch row, all in one turn of the BLAS thread.
template <class T>
void gemm_batch(const T* x, const T* y, T* out, const dot_geometry& g) {
  auto M = static_cast<int>(g.m), K = static_cast<int>(g.k), N = static_cast<int>(g.n);
  auto ta = g.transpose_x ? CblasTrans : CblasNoTrans, tb = g.transpose_y ? CblasTrans : CblasNoTrans;
  int lda = g.transpose_x ? M : K, ldb = g.transpose_y ? K : N;
  ensure_blas_kernels(); // once: kernels as wide as the CPU's vectors, before the first product
  if constexpr (std::is_same_v<T, float>)
    float32_products(); // once: oneDNN opened (or not) before the BLAS thread's first turn
  auto flop = 2.0 * static_cast<double>(g.batch) * static_cast<double>(g.m) * static_cast<double>(g.n)
              * static_cast<double>(g.k);
  run_on_blas_thread([&] {
    for (std::int64_t b = 0; b < g.batch; ++b) {
      const T* xb = x + b * g.m * g.k;
      const T* yb = y + (g.y_batched ? b * g.k * g.n : 0);
      T* ob = out + b * g.m * g.n;
      if constexpr (std::is_same_v<T, float>) {
        if (!onednn_sgemm(g.transpose_x, g.transpose_y, M, N, K, xb, lda, yb, ldb, ob, N))
          cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.0f, xb, lda, yb, ldb, 0.0f, ob, N);
      } else
        cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1.0, xb, lda, yb, ldb, 0.0, ob, N);
    }
  }, flop);
}

/// `count` matrices of `rows` x `cols` elements of `size` bytes, each transposed into `dst`.
void transpose_matrices(const char* src, char* dst, std::int64_t count, std::int64_t rows, std::int64_t cols,
                        std::size_t size) {
  for (std::int64_t b = 0; b < count; ++b, src += rows * cols * size, dst += rows * cols * size)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        std::memcpy(dst + (j * rows + i) * size, src + (i * cols + j) * size, size);
}

} // namespace

void run_dot(dtype t, const void* x, const std::vector<std::int64_t>& xs, const void* y,
             const std::vector<std::int64_t>& ys, void* out, const std::vector<std::int64_t>& attrs,
             dot_kernel fallback) {
  auto g = dot_geometry_of(xs, ys, attrs);
  if (g.batch == 0 || g.m == 0 || g.n == 0)
    return;
  if (g.k == 0) { // empty sums (BLAS refuses a leading dimension of 0)
    std::memset(out, 0, static_cast<std::size_t>(g.batch * g.m * g.n) * size_of(t));
    return;
  }
  bool fits = g.m <= blas_limit && g.k <= blas_limit && g.n <= blas_limit;
  if (fits && t == dtype::float32)
    return gemm_batch(static_cast<const float*>(x), static_cast<const float*>(y), static_cast<float*>(out), g);
  if (fits && t == dtype::float64)
    return gemm_batch(static_cast<const double*>(x), static_cast<const double*>(y), static_cast<double*>(out), g);
  auto size = size_of(t);
  std::vector<char> x_plain, y_plain;
  auto* xp = static_cast<const char*>(x);
  auto* yp = static_cast<const char*>(y);
  if (g.transpose_x) {
    x_plain.resize(static_cast<std::size_t>(g.batch * g.m * g.k) * size);
    transpose_matrices(xp, x_plain.data(), g.batch, g.k, g.m, size);
    xp = x_plain.data();
  }
  if (g.transpose_y) {
    auto count = g.y_batched ? g.batch : 1;
    y_plain.resize(static_cast<std::size_t>(count * g.k * g.n) * size);
    transpose_matrices(yp, y_plain.data(), count, g.n, g.k, size);
    yp = y_plain.data();
  }
  for (std::int64_t b = 0; b < g.batch; ++b)
    fallback(xp + b * g.m * g.k * size, yp + (g.y_batched ? b * g.k * g.n * size : 0),
             static_cast<char*>(out) + b * g.m * g.n * size, g.m, g.k, g.n);
}

} // namespace am::detail
