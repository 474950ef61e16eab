
// CPU kernel benchmark: the seed's complex_computation (tanh(sin x * cos x) + sqrt|x|) * 2 over one
// float32 shard, per thread, as
//   (a) a hand-written loop of SLEEF's AVX-512 u35 functions (the anchor),
//   (b) the program compiled by the CPU compiler with fusion (one loop over cache-sized tiles),
//   (c) the same program compiled without fusion (one pass over memory per instruction),
//   (d) the fused program through the runtime (am::execute on a CPU device, waiting for the result).
// (a)-(c) run interleaved and are timed in CPU time of the calling thread (robust against other
// processes on a shared machine); (d) runs on the device actor's thread and is timed in wall time.
// Each figure is the best of --reps runs, printed as Gelem/s and as a ratio against (a).
//
//   ./build/bench/bench_cpu_kernels [--elements N] [--reps R] [--tile T (default: the compiler's)]
#include <actormesh.hpp>

#include "devices/detail/buffer_pool.hpp"
#include "devices/cpu/cpu_buffer.hpp"
#include "devices/cpu/cpu_runner.hpp"

#include "devices/cpu/avx512_intrinsics.hpp" // <immintrin.h> without GCC 12's false warning

#include "bench_flags.hpp"
#include "bench_report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

// SLEEF's AVX-512 entry points (sleef.h declares them only when the unit is compiled with AVX-512).
extern "C" {
__m512 Sleef_sinf16_u35avx512f(__m512);
__m512 Sleef_cosf16_u35avx512f(__m512);
__m512 Sleef_tanhf16_u35avx512f(__m512);
struct am_sleef_m512_2 {
  __m512 x, y;
};
am_sleef_m512_2 Sleef_sincosf16_u35avx512f(__m512);
}

namespace {

using clock_type = std::chrono::steady_clock;

/// (a): the expression in registers, 16 lanes at a time (n a multiple of 16).
__attribute__((target("avx512f"))) void hand_loop(const float* x, float* y, long long n) {
  const __m512 two = _mm512_set1_ps(2.0f);
  for (long long i = 0; i < n; i += 16) {
    __m512 v = _mm512_loadu_ps(x + i);
    auto sc = Sleef_sincosf16_u35avx512f(v); // sin and cos in one call, as a careful hand would
    __m512 t = Sleef_tanhf16_u35avx512f(_mm512_mul_ps(sc.x, sc.y));
    __m512 r = _mm512_sqrt_ps(_mm512_abs_ps(v));
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_add_ps(t, r), two));
  }
}

std::shared_ptr<const am::program> complex_computation(long long n) {
  am::value_type t{am::dtype::float32, {n}};
  am::program_builder b("complex_computation");
  auto x = b.parameter(t);
  auto y = b.binary(am::opcode::multiply, b.unary(am::opcode::sin, x), b.unary(am::opcode::cos, x));
  auto z = b.binary(am::opcode::add, b.unary(am::opcode::tanh, y),
                    b.unary(am::opcode::sqrt, b.unary(am::opcode::abs, x)));
  b.output(b.binary(am::opcode::multiply, z, b.constant(2.0, t)));
  return b.build();
}

/// CPU seconds this thread has run (unlike wall time, not inflated while other processes run).
double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// CPU seconds of this thread one run of `f` takes.
template <class F>
double time_of(F&& f) {
  auto t0 = thread_seconds();
  f();
  return thread_seconds() - t0;
}

/// Wall seconds one run of `f` takes.
template <class F>
double wall_time_of(F&& f) {
  auto t0 = clock_type::now();
  f();
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

/// Best seconds of `reps` runs of `f`.
template <class F>
double best_of(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r)
    best = std::min(best, wall_time_of(f));
  return best;
}

} // namespace

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "the seed's complex_computation over one float32 shard per thread, against a SLEEF loop");
  const long long n = flag.integer("--elements", 8192LL * 8192 / 8, "float32 elements per shard (rounded down to 16)") / 16 * 16;
  const int reps = static_cast<int>(flag.integer("--reps", 7, "timed repetitions (the median is reported)"));
  const long long tile = flag.integer("--tile", am::detail::compile_options{}.tile, "elements per tile of the fused loop");
  flag.finish();
  if (!__builtin_cpu_supports("avx512f")) {
    fmt::print("this CPU has no AVX-512: the anchor loop cannot run\n");
    return 4;
  }
  auto pool = std::make_shared<am::detail::buffer_pool>(0, 0);
  auto input = am::detail::make_cpu_buffer(am::dtype::float32, {n}, pool);
  auto* x = static_cast<float*>(input->data());
  for (long long i = 0; i < n; ++i)
    x[i] = static_cast<float>((i * 7919) % 200003) * 1e-3f - 100.0f;
  std::vector<float> anchor_out(static_cast<std::size_t>(n));
  hand_loop(x, anchor_out.data(), n);

  auto prog = complex_computation(n);
  am::detail::compile_options fused_opts;
  fused_opts.tile = tile;
  am::detail::compile_options unfused_opts = fused_opts;
  unfused_opts.fuse = false;
  auto fused = am::detail::compile_for_cpu(*prog, fused_opts);
  auto unfused = am::detail::compile_for_cpu(*prog, unfused_opts);
  am::detail::cpu_scratch scratch;
  std::vector<am::buffer_ref> inputs{input};

  // Check the compiled result against the anchor before timing it.
  auto check = am::detail::run_compiled(*fused, *prog, inputs, pool, scratch)[0];
  double worst = 0;
  for (long long i = 0; i < n; ++i) {
    float a = anchor_out[static_cast<std::size_t>(i)], b = static_cast<float*>(check->data())[i];
    worst = std::max(worst, static_cast<double>(std::fabs(a - b)) / std::max(1.0, static_cast<double>(std::fabs(a))));
  }
  check.reset();

  // Interleaved, so that load from other processes hits every variant alike; best of each.
  double t_anchor = 1e30, t_fused = 1e30, t_unfused = 1e30;
  for (int r = 0; r < reps; ++r) {
    t_anchor = std::min(t_anchor, time_of([&] { hand_loop(x, anchor_out.data(), n); }));
    t_fused = std::min(t_fused, time_of([&] { am::detail::run_compiled(*fused, *prog, inputs, pool, scratch); }));
    t_unfused = std::min(t_unfused, time_of([&] { am::detail::run_compiled(*unfused, *prog, inputs, pool, scratch); }));
  }

  double t_runtime = 0;
  {
    am::options o;
    o.cpu_devices = 1;
    o.use_gpus = false;
    am::runtime rt(o);
    auto d = am::devices()[0];
    std::vector<std::byte> bytes(static_cast<std::size_t>(n) * 4);
    std::memcpy(bytes.data(), x, bytes.size());
    auto shard = am::upload(d, std::move(bytes), {am::dtype::float32, {n}});
    am::execute(d, prog, {shard})[0].get(); // compiles and warms the pool
    t_runtime = best_of(reps, [&] { am::execute(d, prog, {shard})[0].get(); });
  }

  auto gelems = [&](double t) { return static_cast<double>(n) / t * 1e-9; };
  fmt::print("complex_computation over {} float32 elements, one thread, best of {} (kernels: {}, tile {})\n",
             n, reps, am::detail::isa_name(fused->isa), tile);
  fmt::print("  (a) hand-written SLEEF AVX-512 u35 loop  {:6.3f} Gelem/s  1.00x\n", gelems(t_anchor));
  fmt::print("  (b) fused program (compiler)             {:6.3f} Gelem/s  {:.2f}x\n", gelems(t_fused),
             t_anchor / t_fused);
  fmt::print("  (c) unfused program (one op at a time)   {:6.3f} Gelem/s  {:.2f}x\n", gelems(t_unfused),
             t_anchor / t_unfused);
  fmt::print("  (d) fused, through the runtime           {:6.3f} Gelem/s  {:.2f}x\n", gelems(t_runtime),
             t_anchor / t_runtime);
  am::bench::ratio_line(t_anchor / t_fused, "one thread, fused program: speed / the SLEEF loop's");
  am::bench::ratio_line(t_anchor / t_unfused, "one thread, unfused program: speed / the SLEEF loop's");
  am::bench::ratio_line(t_anchor / t_runtime, "one thread, fused through the runtime: speed / the SLEEF loop's");
  fmt::print("  largest relative difference (b) vs (a): {:.2e}\n", worst);
  return 0;
}

int main(int argc, char** argv) { return am::bench::guarded_main("bench_cpu_kernels", run, argc, argv); }
