
// GPU benchmark: the seed's complex_computation, (tanh(sin x cos x) + sqrt|x|) * 2, over an 8192 x
// 8192 float32 array on one CUDA device, through the runtime fused (one NVRTC kernel) and unfused
// (one precompiled kernel per instruction, AM_CUDA_FUSION=off), against a hand-written CUDA kernel
// of the same expression (the anchor). Throughput in Gelem/s and ratios to the anchor, all measured
// in this run. Without a usable GPU it says why and exits 0.
//
//   ./build/bench/bench_gpu [--side N] [--runs R]
#include <actormesh.hpp>

#include "actormesh/build_config.hpp"
#if AM_HAVE_CUDA
#include "devices/cuda/cuda_reference.hpp"
#endif

#include "bench_flags.hpp"
#include "bench_report.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

std::shared_ptr<const am::program> complex_computation(const am::shape_t& shape) {
  am::value_type t{am::dtype::float32, shape};
  am::program_builder b("complex_computation");
  auto x = b.parameter(t);
  auto y = b.binary(am::opcode::multiply, b.unary(am::opcode::sin, x), b.unary(am::opcode::cos, x));
  auto z = b.binary(am::opcode::add, b.unary(am::opcode::tanh, y),
                    b.unary(am::opcode::sqrt, b.unary(am::opcode::abs, x)));
  b.output(b.binary(am::opcode::multiply, z,
                    b.broadcast_in_dim(b.constant(2.0, {am::dtype::float32, {}}), shape, {})));
  return b.build();
}

struct measurement {
  double first_call_ms = 0; ///< includes compiling the fused kernel
  double seconds_per_run = 0;
};

/// Runs complex_computation through the runtime (fusion on or off) `runs` times back to back (only
/// a build with CUDA calls it).
[[maybe_unused]] measurement through_runtime(bool fused, std::int64_t side, int runs) {
  setenv("AM_CUDA_FUSION", fused ? "on" : "off", 1);
  am::runtime rt;
  auto gpu = am::devices(am::platform::cuda).at(0);
  am::shape_t shape{side, side};
  auto n = static_cast<std::size_t>(side * side);
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i)
    host[i] = -10.0f + 20.0f * static_cast<float>(i % 100003) / 100003.0f;
  std::vector<std::byte> bytes(n * sizeof(float));
  std::memcpy(bytes.data(), host.data(), bytes.size());
  auto x = am::upload(gpu, std::move(bytes), {am::dtype::float32, shape});
  x.get();
  auto p = complex_computation(shape);
  measurement m;
  auto t0 = clock_type::now();
  am::execute(gpu, p, {x})[0].get();
  m.first_call_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  am::execute(gpu, p, {x})[0].get(); // warm
  std::vector<am::shard_future> outs;
  auto start = clock_type::now();
  for (int r = 0; r < runs; ++r) {
    outs.push_back(am::execute(gpu, p, {x})[0]);
    if (outs.size() >= 8) { // bound the memory held by results
      outs.front().get();
      outs.erase(outs.begin());
    }
  }
  for (auto& o : outs)
    o.get();
  m.seconds_per_run = std::chrono::duration<double>(clock_type::now() - start).count() / runs;
  unsetenv("AM_CUDA_FUSION");
  return m;
}

} // namespace

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "the seed's complex_computation on one CUDA device, fused and unfused, against a hand-written kernel");
  [[maybe_unused]] const std::int64_t side = flag.integer("--side", 8192, "side of the square array");
  [[maybe_unused]] const int runs = static_cast<int>(flag.integer("--runs", 50, "measured runs"));
  flag.finish();
  auto gpus = am::discover_gpus(true);
  if (gpus.count == 0) {
    fmt::print("bench_gpu: no usable GPU ({}); nothing to measure\n", gpus.reason);
    return 0;
  }
#if AM_HAVE_CUDA
  double elements = static_cast<double>(side * side);
  fmt::print("complex_computation over float32[{}, {}] on one CUDA device, {} runs each\n", side, side, runs);
  double anchor = am::detail::cuda::time_reference_complex_computation(0, side * side, runs);
  auto fused = through_runtime(true, side, runs);
  auto unfused = through_runtime(false, side, runs);
  auto gelems = [&](double seconds) { return elements / seconds / 1e9; };
  fmt::print("  {:<34} {:>9.1f} Gelem/s   {:>7.3f} ms/run\n", "hand-written CUDA kernel (anchor)", gelems(anchor), anchor * 1e3);
  fmt::print("  {:<34} {:>9.1f} Gelem/s   {:>7.3f} ms/run   first call {:.0f} ms (NVRTC compile)\n",
             "runtime, fused (jit)", gelems(fused.seconds_per_run), fused.seconds_per_run * 1e3, fused.first_call_ms);
  fmt::print("  {:<34} {:>9.1f} Gelem/s   {:>7.3f} ms/run\n", "runtime, unfused (kernel per op)",
             gelems(unfused.seconds_per_run), unfused.seconds_per_run * 1e3);
  fmt::print("ratios: fused/anchor {:.2f}x   unfused/anchor {:.2f}x   fused/unfused {:.2f}x\n",
             anchor / fused.seconds_per_run, anchor / unfused.seconds_per_run,
             unfused.seconds_per_run / fused.seconds_per_run);
#else
  (void)argc;
  (void)argv;
#endif
  return 0;
}

int main(int argc, char** argv) { return am::bench::guarded_main("bench_gpu", run, argc, argv); }
