// OpenBLAS against the other BLAS libraries Debian ships: BLIS 0.9 and oneDNN
// 2.6, each loaded at run time (dlopen, so that their symbols cannot mix with the OpenBLAS the
// runtime links), on square float32 and float64 products with every core. Each figure is the
// median of R timed products after one warm-up; each size's ratios are against the fastest library
// in the same run. A library that is not installed is reported as such (`apt-get install
// libblis-dev libdnnl-dev` puts both in place; nothing else here needs them).
//
// BLIS is called through its own typed API (bli_sgemm), not its CBLAS layer, whose calls could
// resolve to OpenBLAS's symbols of the same name; oneDNN has no float64 product.
//
//   ./build/bench/bench_blas_libraries [--sizes 256,1024,2048] [--rounds 5]
#include "bench_flags.hpp"
#include "bench_report.hpp"
#include "devices/cpu/blas_kernels.hpp"

#include <cblas.h>
#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using am::bench::percentile;

namespace {

using clock_type = std::chrono::steady_clock;

/// A product C = A B of n x n row-major matrices of T, by one library.
template <class T>
using product = std::function<void(long long n, const T* a, const T* b, T* c)>;

/// BLIS, through the typed API of libblis.so.4 (bli_?gemm with row and column strides).
struct blis_library {
  using dim = std::int64_t; // BLIS's gint_t in Debian's 64-bit integer build
  template <class T>
  using gemm_fn = void (*)(int, int, dim, dim, dim, T*, T*, dim, dim, T*, dim, dim, T*, T*, dim, dim);
  void* handle = dlopen("libblis.so.4", RTLD_NOW | RTLD_LOCAL);
  gemm_fn<float> sgemm = handle ? reinterpret_cast<gemm_fn<float>>(dlsym(handle, "bli_sgemm")) : nullptr;
  gemm_fn<double> dgemm = handle ? reinterpret_cast<gemm_fn<double>>(dlsym(handle, "bli_dgemm")) : nullptr;

  /// The kernels' configuration BLIS chose for this CPU ("zen3", "skx", ...).
  std::string kernels() const {
    auto query = reinterpret_cast<int (*)()>(dlsym(handle, "bli_arch_query_id"));
    auto name = reinterpret_cast<const char* (*)(int)>(dlsym(handle, "bli_arch_string"));
    return query && name ? name(query()) : "?";
  }

  void use_threads(unsigned n) const {
    if (auto set = reinterpret_cast<void (*)(dim)>(dlsym(handle, "bli_thread_set_num_threads")))
      set(static_cast<dim>(n));
  }

  template <class T>
  product<T> gemm(gemm_fn<T> fn) const {
    return [fn](long long n, const T* a, const T* b, T* c) {
      T one = 1, zero = 0;
      fn(0, 0, n, n, n, &one, const_cast<T*>(a), n, 1, const_cast<T*>(b), n, 1, &zero, c, n, 1);
    };
  }
};

/// oneDNN's dnnl_sgemm (row-major) from libdnnl.so.2.
struct onednn_library {
  using sgemm_fn = int (*)(char, char, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                           const float*, std::int64_t, float, float*, std::int64_t);
  void* handle = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  sgemm_fn sgemm = handle ? reinterpret_cast<sgemm_fn>(dlsym(handle, "dnnl_sgemm")) : nullptr;

  /// oneDNN's own ISA level (dnnl_cpu_isa_t: 0x27 avx512_core, 0x67 with VNNI, 0xe7 with bf16, ...).
  std::string kernels() const {
    auto isa = reinterpret_cast<int (*)()>(dlsym(handle, "dnnl_get_effective_cpu_isa"));
    char text[32];
    std::snprintf(text, sizeof text, "isa 0x%x", isa ? isa() : 0);
    return text;
  }
};

template <class T>
product<T> openblas_gemm() {
  return [](long long n, const T* a, const T* b, T* c) {
    const int m = static_cast<int>(n);
    if constexpr (std::is_same_v<T, float>)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, a, m, b, m, 0.0f, c, m);
    else
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0, a, m, b, m, 0.0, c, m);
  };
}

/// GFLOP/s of `f` on n x n products (median of `rounds` after a warm-up), and whether its result
/// matched OpenBLAS's (`reference`, when given) to a relative 1e-3.
template <class T>
double gflops(const product<T>& f, long long n, long long rounds, std::vector<T>* reference, bool& right) {
  std::vector<T> a(static_cast<std::size_t>(n * n)), b(a.size()), c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<T>((i % 17) * 0.25);
    b[i] = static_cast<T>((i % 13) * 0.5);
  }
  f(n, a.data(), b.data(), c.data());
  std::vector<double> s;
  for (long long r = 0; r < rounds; ++r) {
    auto start = clock_type::now();
    f(n, a.data(), b.data(), c.data());
    s.push_back(std::chrono::duration<double>(clock_type::now() - start).count());
  }
  right = true;
  if (reference && !reference->empty())
    for (std::size_t i = 0; i < c.size(); i += 997)
      right = right && std::abs(c[i] - (*reference)[i]) <= 1e-3 * std::abs((*reference)[i]) + 1e-3;
  if (reference && reference->empty())
    *reference = c;
  return 2.0 * static_cast<double>(n) * n * n / percentile(s, 0.5) / 1e9;
}

std::vector<long long> parse_sizes(const std::string& text) {
  std::vector<long long> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    out.push_back(std::stoll(item));
  if (out.empty())
    throw std::invalid_argument("--sizes: no size given");
  return out;
}

template <class T>
void compare(const char* type, long long n, long long rounds, const std::vector<std::pair<std::string, product<T>>>& libs) {
  std::vector<T> reference;
  std::vector<double> speed;
  std::vector<bool> right;
  for (auto& [name, f] : libs) {
    bool ok = true;
    speed.push_back(gflops<T>(f, n, rounds, &reference, ok));
    right.push_back(ok);
  }
  double best = 0;
  for (double v : speed)
    best = std::max(best, v);
  std::printf("%s %lld²:\n", type, n);
  for (std::size_t k = 0; k < libs.size(); ++k)
    std::printf("  %-9s %7.1f GFLOP/s  %.2fx of the best%s\n", libs[k].first.c_str(), speed[k], speed[k] / best,
                right[k] ? "" : "  (WRONG values)");
  am::bench::ratio_line(speed[0] / best, std::string(type) + " " + std::to_string(n) + "² product: OpenBLAS / the best library");
}

} // namespace

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "square products by OpenBLAS, BLIS and oneDNN on every core");
  const auto sizes = parse_sizes(flag.text("--sizes", "256,1024,2048", "sides of the square matrices, comma-separated"));
  const long long rounds = flag.integer("--rounds", 5, "timed rounds per library and size");
  flag.finish();
  const unsigned cores = std::thread::hardware_concurrency();
  const auto& kept = am::detail::ensure_blas_kernels();
  blis_library blis;
  onednn_library onednn;
  std::printf("OpenBLAS: %s kernels (%s)\n", kept.core.c_str(), kept.why.c_str());
  std::printf("BLIS: %s\n", blis.sgemm && blis.dgemm ? ("libblis.so.4, " + blis.kernels() + " kernels").c_str()
                                                     : "not installed (libblis-dev)");
  std::printf("oneDNN: %s\n", onednn.sgemm ? ("libdnnl.so.2, " + onednn.kernels()).c_str() : "not installed (libdnnl-dev)");
  if (blis.handle)
    blis.use_threads(cores);
  for (long long n : sizes) {
    std::vector<std::pair<std::string, product<float>>> f32{{"OpenBLAS", openblas_gemm<float>()}};
    std::vector<std::pair<std::string, product<double>>> f64{{"OpenBLAS", openblas_gemm<double>()}};
    if (blis.sgemm && blis.dgemm) {
      f32.emplace_back("BLIS", blis.gemm(blis.sgemm));
      f64.emplace_back("BLIS", blis.gemm(blis.dgemm));
    }
    if (onednn.sgemm)
      f32.emplace_back("oneDNN", [&onednn](long long m, const float* a, const float* b, float* c) {
        onednn.sgemm('N', 'N', m, m, m, 1.0f, a, m, b, m, 0.0f, c, m);
      });
    compare<float>("float32", n, rounds, f32);
    compare<double>("float64", n, rounds, f64);
  }
  return 0;
}

int main(int argc, char** argv) { return am::bench::guarded_main("bench_blas_libraries", run, argc, argv); }
