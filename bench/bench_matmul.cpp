// Matrix products at library speed: am::matmul of n x n float32 and float64
// matrices on one CPU device and sharded over every CPU device (rows of the left operand over the
// devices, the right one replicated), against cblas_sgemm / cblas_dgemm of OpenBLAS called
// directly on the same shapes in the same run. Each figure is the median of R timed runs after one
// warm-up; ratios are ours / OpenBLAS in GFLOP/s (higher is better). Batched products too: B
// products of s x s matrices ([B,s,s] @ [B,s,s], and with one [s,s] y shared by every batch row),
// on one device and with the batch dim sharded over every device, against a loop of cblas calls.
//
//   ./build/bench/bench_matmul [--n 2048] [--rounds 5] [--batch 64] [--size 256]
#include <actormesh.hpp>

#include "bench_flags.hpp"
#include "bench_report.hpp"

#include <cblas.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <vector>

using am::bench::percentile;

namespace {

using clock_type = std::chrono::steady_clock;

template <class F>
double median_seconds(long long rounds, F&& f) {
  std::vector<double> s;
  f(); // warm-up
  for (long long r = 0; r < rounds; ++r) {
    auto start = clock_type::now();
    f();
    s.push_back(std::chrono::duration<double>(clock_type::now() - start).count());
  }
  return percentile(s, 0.5);
}

template <class T>
void compare(am::dtype type, const char* label, long long n, long long rounds) {
  std::vector<T> a(static_cast<std::size_t>(n * n)), b(a.size()), c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<T>((i % 17) * 0.25);
    b[i] = static_cast<T>((i % 13) * 0.5);
  }
  double flop = 2.0 * static_cast<double>(n) * n * n;
  double direct = median_seconds(rounds, [&] {
    if constexpr (sizeof(T) == 4)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n), static_cast<int>(n),
                  1.0f, a.data(), static_cast<int>(n), b.data(), static_cast<int>(n), 0.0f, c.data(), static_cast<int>(n));
    else
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n), static_cast<int>(n),
                  1.0, a.data(), static_cast<int>(n), b.data(), static_cast<int>(n), 0.0, c.data(), static_cast<int>(n));
  });
  int count = am::device_count();
  // The same product as `count` row blocks, one call each, one after another: what the sharded
  // run asks of OpenBLAS (each call packs all of b again), to tell its cost from ours.
  double blocks = median_seconds(rounds, [&] {
    auto rows_per = n / count;
    for (int d = 0; d < count; ++d) {
      auto R = static_cast<int>(rows_per), N = static_cast<int>(n);
      if constexpr (sizeof(T) == 4)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, R, N, N, 1.0f, a.data() + d * rows_per * n, N,
                    b.data(), N, 0.0f, c.data() + d * rows_per * n, N);
      else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, R, N, N, 1.0, a.data() + d * rows_per * n, N,
                    b.data(), N, 0.0, c.data() + d * rows_per * n, N);
    }
  });
  auto ha = am::host_array::from_vector(a, {n, n}), hb = am::host_array::from_vector(b, {n, n});
  auto dev = am::devices().front();
  auto x1 = am::device_put(ha.astype(type), dev), y1 = am::device_put(hb.astype(type), dev);
  double one = median_seconds(rounds, [&] { am::matmul(x1, y1).block_until_ready(); });
  am::mesh m(am::create_device_mesh({count}, am::devices()), {"x"});
  auto rows = am::make_named_sharding(m, am::P("x", am::none));
  auto replicated = am::make_named_sharding(m, am::P());
  auto x8 = am::device_put(ha.astype(type), rows), y8 = am::device_put(hb.astype(type), replicated);
  double all = median_seconds(rounds, [&] { am::matmul(x8, y8).block_until_ready(); });
  std::printf("%s %lldx%lld: OpenBLAS directly %.1f GFLOP/s (%.3f s); one device %.1f GFLOP/s, %.2fx; "
              "%d devices %.1f GFLOP/s, %.2fx\n",
              label, n, n, flop / direct / 1e9, direct, flop / one / 1e9, direct / one, count, flop / all / 1e9,
              direct / all);
  std::printf("  OpenBLAS as %d row blocks one after another: %.1f GFLOP/s, %.2fx of the one call; "
              "%d devices against it: %.2fx\n",
              count, flop / blocks / 1e9, direct / blocks, count, blocks / all);
  std::printf("RESULT matmul_%s_one_ratio %.3f\nRESULT matmul_%s_all_ratio %.3f\nRESULT matmul_%s_blocks_ratio %.3f\n",
              label, direct / one, label, direct / all, label, direct / blocks);
  am::bench::ratio_line(direct / one, fmt::format("{} {}x{} product, one device: speed / OpenBLAS's", label, n, n));
  am::bench::ratio_line(direct / all, fmt::format("{} {}x{} product, {} devices: speed / OpenBLAS's", label, n, n, count));
}

/// One cblas call per batch row: the peer of a batched matmul.
template <class T>
void gemm_loop(const T* a, const T* b, T* c, long long batch, long long n, bool shared) {
  auto N = static_cast<int>(n);
  for (long long i = 0; i < batch; ++i) {
    const T* ai = a + i * n * n;
    const T* bi = b + (shared ? 0 : i * n * n);
    T* ci = c + i * n * n;
    if constexpr (sizeof(T) == 4)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, ai, N, bi, N, 0.0f, ci, N);
    else
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, ai, N, bi, N, 0.0, ci, N);
  }
}

template <class T>
void compare_batched(am::dtype type, const char* label, long long batch, long long n, bool shared, long long rounds) {
  std::vector<T> a(static_cast<std::size_t>(batch * n * n)), b(shared ? static_cast<std::size_t>(n * n) : a.size()),
    c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<T>((i % 17) * 0.25);
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<T>((i % 13) * 0.5);
  double flop = 2.0 * static_cast<double>(batch) * n * n * n;
  double direct = median_seconds(rounds, [&] { gemm_loop(a.data(), b.data(), c.data(), batch, n, shared); });
  auto ha = am::host_array::from_vector(a, {batch, n, n});
  auto hb = shared ? am::host_array::from_vector(b, {n, n}) : am::host_array::from_vector(b, {batch, n, n});
  auto dev = am::devices().front();
  auto x1 = am::device_put(ha.astype(type), dev), y1 = am::device_put(hb.astype(type), dev);
  double one = median_seconds(rounds, [&] { am::matmul(x1, y1).block_until_ready(); });
  int count = am::device_count();
  am::mesh m(am::create_device_mesh({count}, am::devices()), {"x"});
  auto rows = am::make_named_sharding(m, am::P("x"));
  auto x8 = am::device_put(ha.astype(type), rows);
  auto y8 = am::device_put(hb.astype(type), shared ? am::make_named_sharding(m, am::P()) : rows);
  double all = median_seconds(rounds, [&] { am::matmul(x8, y8).block_until_ready(); });
  const char* kind = shared ? "shared" : "batched";
  std::printf("%s %s [%lld,%lld,%lld]: OpenBLAS loop %.1f GFLOP/s (%.3f s); one device %.1f GFLOP/s, %.2fx; "
              "%d devices (batch sharded) %.1f GFLOP/s, %.2fx\n",
              label, kind, batch, n, n, flop / direct / 1e9, direct, flop / one / 1e9, direct / one, count,
              flop / all / 1e9, direct / all);
  std::printf("RESULT matmul_%s_%s_one_ratio %.3f\nRESULT matmul_%s_%s_all_ratio %.3f\n", kind, label, direct / one,
              kind, label, direct / all);
  am::bench::ratio_line(direct / one, fmt::format("{} {} products, one device: speed / a loop of OpenBLAS calls", label, kind));
  am::bench::ratio_line(direct / all, fmt::format("{} {} products, {} devices: speed / a loop of OpenBLAS calls", label, kind, count));
}

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "am::matmul of float32 and float64 matrices, one device and sharded, against OpenBLAS called directly");
  auto n = flag.integer("--n", 2048, "side of the square matrices");
  auto rounds = std::max<long long>(1, flag.integer("--rounds", 5, "timed rounds"));
  auto batch = flag.integer("--batch", 64, "matrices in the batched products");
  auto size = flag.integer("--size", 256, "side of each matrix of the batch");
  flag.finish();
  am::runtime rt(argc, argv);
  compare<float>(am::dtype::float32, "float32", n, rounds);
  compare<double>(am::dtype::float64, "float64", n, rounds);
  for (bool shared : {false, true}) {
    compare_batched<float>(am::dtype::float32, "float32", batch, size, shared, rounds);
    compare_batched<double>(am::dtype::float64, "float64", batch, size, shared, rounds);
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_matmul", run, argc, argv); }
