// GPU figures of pmap, run by tests/gpu/pmap_gpu_check.sh: elementwise bandwidth of
// the runtime on one CUDA device (y = x * 2 + 1 over float32, under jit: one fused kernel, reading
// and writing every byte once) as a fraction of the device's HBM peak (memory clock x bus width x
// 2, from the CUDA attributes), next to cudaMemcpy device-to-device of the same bytes in the same
// run (the measured peer), and a pmap'd psum-and-update step on the GPU(s) against the same step on
// as many CPU devices. Medians of R runs after one warm-up. Without a usable GPU it says why and
// exits 0.
//
//   ./build/bench/bench_pmap_gpu [--mib 1024] [--rounds 20]
#include <actormesh.hpp>

#include "actormesh/build_config.hpp"
#include "bench_flags.hpp"
#include "bench_report.hpp"

#if AM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include <fmt/core.h>

#include <vector>

using am::array;
using am::bench::median_seconds;

namespace {

#if AM_HAVE_CUDA
/// The HBM peak of CUDA device `ordinal` in bytes/s (0 when the attributes are missing).
double hbm_peak(int ordinal) {
  int khz = 0, bits = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, ordinal) != cudaSuccess
      || cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, ordinal) != cudaSuccess)
    return 0;
  return 2.0 * khz * 1e3 * bits / 8.0;
}

/// cudaMemcpy device-to-device of `bytes` on device `ordinal`, seconds per copy.
double memcpy_seconds(int ordinal, std::size_t bytes, int rounds) {
  cudaSetDevice(ordinal);
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess)
    throw std::runtime_error("cudaMalloc of the memcpy peer failed");
  cudaMemset(a, 1, bytes);
  double s = median_seconds(rounds, [&] {
    cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
  });
  cudaFree(a);
  cudaFree(b);
  return s;
}
#endif

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "pmap on one CUDA device: elementwise bandwidth against the HBM peak and memcpy");
  [[maybe_unused]] const auto mib = flag.integer("--mib", 1024, "MiB per operation");
  [[maybe_unused]] const auto rounds = static_cast<int>(flag.integer("--rounds", 20, "timed rounds"));
  flag.finish();
  auto gpus = am::discover_gpus(true);
  if (gpus.count == 0) {
    fmt::print("bench_pmap_gpu: no usable GPU ({}); nothing to measure\n", gpus.reason);
    return 0;
  }
#if AM_HAVE_CUDA
  am::options opts;
  opts.cpu_devices = static_cast<int>(gpus.count);
  am::runtime rt(argc, argv, opts);
  auto gpu_devices = am::devices(am::platform::cuda);
  auto gpu = gpu_devices.at(0);
  const std::int64_t n = mib * (1 << 20) / 4;
  auto x = am::device_put(am::host_array::full({n}, 0.5, am::dtype::float32), gpu);
  x.block_until_ready();
  auto f = am::jit([](const array& a) { return a * 2.0 + 1.0; });
  double ours = median_seconds(rounds, [&] { f(x).block_until_ready(); });
  std::size_t bytes = static_cast<std::size_t>(n) * 4;
  double copy = memcpy_seconds(gpu.local_ordinal, bytes, rounds);
  double peak = hbm_peak(gpu.local_ordinal);
  double moved = 2.0 * static_cast<double>(bytes); // read x, write y
  fmt::print("elementwise x * 2 + 1 over float32[{}] ({} MiB) on {}: {:.3f} ms, {:.0f} GB/s\n", n, mib,
             am::to_string(gpu), ours * 1e3, moved / ours / 1e9);
  fmt::print("cudaMemcpy device-to-device of the same {} MiB: {:.3f} ms, {:.0f} GB/s; elementwise / memcpy {:.2f}x\n",
             mib, copy * 1e3, moved / copy / 1e9, copy / ours);
  if (peak > 0)
    fmt::print("HBM peak {:.0f} GB/s: elementwise at {:.0f}% of peak, memcpy at {:.0f}%\n", peak / 1e9,
               100 * moved / ours / peak, 100 * moved / copy / peak);
  else
    fmt::print("HBM peak: the CUDA attributes are missing, no fraction\n");
  // A pmap'd all-reduce and update over the GPUs against the same on as many CPU devices.
  auto cpu_devices = am::devices(am::platform::cpu);
  cpu_devices.resize(gpu_devices.size());
  auto g = static_cast<std::int64_t>(gpu_devices.size());
  auto step = am::pmap([](const array& w) { return w - am::pmean(w * w, "d") * 0.01; }, "d");
  auto data = am::host_array::full({g, 1 << 22}, 0.25, am::dtype::float32);
  auto on_gpus = am::device_put(data, gpu_devices), on_cpus = am::device_put(data, cpu_devices);
  double gpu_step = median_seconds(rounds, [&] { step(on_gpus).block_until_ready(); });
  double cpu_step = median_seconds(rounds, [&] { step(on_cpus).block_until_ready(); });
  fmt::print("pmap pmean-and-update of float32[{}, 4194304]: {} GPU(s) {:.3f} ms, {} CPU device(s) {:.3f} ms ({:.1f}x)\n",
             g, g, gpu_step * 1e3, g, cpu_step * 1e3, cpu_step / gpu_step);
#else
  (void)argc;
  (void)argv;
#endif
  return 0;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_pmap_gpu", run, argc, argv); }
