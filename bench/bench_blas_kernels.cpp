// Which OpenBLAS kernels a 2048² float32 product runs at, against the CPU's FMA peak: the same
// cblas_sgemm under every core type this CPU can run (OpenBLAS made to choose again,
// devices/cpu/blas_kernels.hpp), OpenBLAS's own choice, and the one actormesh keeps. Each figure is
// the median of R timed products after one warm-up; ratios are against the fastest core type
// measured in the same run.
//
// The peak is cores x clock x FP32 FLOP per cycle. This program measures the clock (a chain of
// dependent additions, one per cycle); FLOP per cycle is 2 (an FMA) x lanes x FMA units: 32 for two
// 256-bit units (Haswell and later with AVX2, AMD Zen 1-4: Zen 4 runs AVX-512 on its 256-bit
// units), 64 for two 512-bit units (Intel Xeon Scalable with two AVX-512 FMA units).
// --flop-per-cycle overrides.
//
//   ./build/bench/bench_blas_kernels [--n 2048] [--rounds 5] [--flop-per-cycle 32]
#include "bench_flags.hpp"
#include "bench_report.hpp"
#include "devices/cpu/blas_kernels.hpp"

#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

using am::bench::percentile;
using namespace am::detail;

namespace {

using clock_type = std::chrono::steady_clock;

/// The core's clock in GHz: dependent additions retire one per cycle.
double measured_ghz() {
  // Eight dependent additions per loop turn, so that the loop's branch (at most one taken per
  // cycle or two) does not set the pace.
  const long long turns = 100'000'000;
  long long x = 0, n = turns;
  auto start = clock_type::now();
  asm volatile("1:\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
               "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tdec %1\n\tjnz 1b"
               : "+r"(x), "+r"(n));
  const double s = std::chrono::duration<double>(clock_type::now() - start).count();
  return 8.0 * static_cast<double>(turns) / s / 1e9;
}

double sgemm_gflops(long long n, long long rounds) {
  std::vector<float> a(static_cast<std::size_t>(n * n)), b(a.size()), c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>((i % 17) * 0.25);
    b[i] = static_cast<float>((i % 13) * 0.5);
  }
  auto run = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                static_cast<int>(n), 1.0f, a.data(), static_cast<int>(n), b.data(), static_cast<int>(n), 0.0f,
                c.data(), static_cast<int>(n));
  };
  run();
  std::vector<double> s;
  for (long long r = 0; r < rounds; ++r) {
    auto start = clock_type::now();
    run();
    s.push_back(std::chrono::duration<double>(clock_type::now() - start).count());
  }
  return 2.0 * static_cast<double>(n) * n * n / percentile(s, 0.5) / 1e9;
}

} // namespace

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "a 2048² float32 product under every OpenBLAS core type this CPU can run, against the cores' FMA peak");
  const long long n = flag.integer("--n", 2048, "side of the square matrices");
  const long long rounds = flag.integer("--rounds", 5, "timed rounds");
  const auto f = this_cpu_features();
  const int bits = vector_bits(f);
  const long long flop_per_cycle =
    flag.integer("--flop-per-cycle", (bits == 512 && !f.amd) ? 64 : (bits >= 256 && f.fma ? 32 : 16), "float32 FLOP per cycle and core of the peak (default from the CPU)");
  flag.finish();
  const unsigned cores = std::thread::hardware_concurrency();
  const double ghz = measured_ghz();
  const double peak = cores * ghz * static_cast<double>(flop_per_cycle);
  const std::string detected = openblas_core();
  std::printf("CPU: %u cores at %.2f GHz (measured), %d-bit vectors%s; FP32 FMA peak %u x %.2f x %lld = %.0f GFLOP/s\n",
              cores, ghz, bits, f.amd ? " (AMD)" : "", cores, ghz, flop_per_cycle, peak);
  std::printf("OpenBLAS chose %s by itself\n", detected.c_str());
  struct row {
    std::string core;
    double gflops;
  };
  std::vector<row> rows;
  for (const char* core : {"Prescott", "Sandybridge", "Haswell", "Zen", "SkylakeX", "Cooperlake"}) {
    const std::string name = core;
    const bool runs = name == "Prescott" || (name == "Sandybridge" && f.avx)
                      || ((name == "Haswell" || name == "Zen") && f.avx2 && f.fma) || (name == "SkylakeX" && f.avx512)
                      || (name == "Cooperlake" && f.avx512bf16);
    if (!runs)
      continue;
    const std::string running = select_openblas_core(core);
    rows.push_back({running, sgemm_gflops(n, rounds)});
  }
  select_openblas_core(detected);
  const auto& kept = ensure_blas_kernels();
  const double ours = sgemm_gflops(n, rounds);
  double best = ours;
  for (auto& r : rows)
    best = std::max(best, r.gflops);
  std::printf("%lld² float32 product (cblas_sgemm), median of %lld:\n", n, rounds);
  for (auto& r : rows)
    std::printf("  %-12s %7.1f GFLOP/s  %.2fx of the best, %3.0f%% of peak\n", r.core.c_str(), r.gflops,
                r.gflops / best, 100.0 * r.gflops / peak);
  std::printf("  actormesh's choice: %s (%s): %.1f GFLOP/s, %.2fx of the best, %.0f%% of peak\n", kept.core.c_str(),
              kept.why.c_str(), ours, ours / best, 100.0 * ours / peak);
  am::bench::ratio_line(ours / best, "2048² sgemm, the kernels actormesh keeps: speed / the best core type's");
  am::bench::ratio_line(ours / peak, "2048² sgemm, the kernels actormesh keeps: GFLOP/s / the cores' FMA peak");
  return 0;
}

int main(int argc, char** argv) { return am::bench::guarded_main("bench_blas_kernels", run, argc, argv); }
