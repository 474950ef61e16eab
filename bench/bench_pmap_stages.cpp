// pmap's collective stages other than the reductions, each against peers measured
// in the same run: all_gather (tiled), psum_scatter (tiled) and ppermute (a ring) over 8 CPU devices
// of F float32 per device, with stages (one pooled buffer the devices share, or views of it) and
// without (AM_PMAP_STAGES=0's one plan: the plan's shard moves), and memcpy of the bytes each
// moves (all_gather: 8 x 8 x F x 4 written, one copy per device as the one plan makes; the others
// 8 x F x 4). Medians of R timed runs after warm-up; ratios are peer time / our time.
//
//   ./build/bench/bench_pmap_stages [--floats 262144] [--rounds 20]
#include <actormesh.hpp>

#include "bench_flags.hpp"
#include "bench_report.hpp"
#include "actormesh/parallel/detail/staged_pmap.hpp"

#include <fmt/core.h>

#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace {

using am::array;
using am::bench::median_seconds;

/// Median seconds of `f(x)` under pmap over the devices, after warm-up calls.
double time_pmap(const std::function<array(const array&)>& f, const array& x, int rounds) {
  auto mapped = am::pmap(f, "i");
  for (int k = 0; k < 3; ++k)
    mapped(x).block_until_ready();
  return median_seconds(rounds, [&] { mapped(x).block_until_ready(); });
}

/// Median seconds of a memcpy of `bytes`.
double time_memcpy(std::size_t bytes, int rounds) {
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  return median_seconds(rounds, [&] {
    std::memcpy(dst.data(), src.data(), bytes);
    asm volatile("" : : "r"(dst.data()) : "memory");
  });
}

/// One collective with stages, as one plan, and against memcpy of `copied` bytes.
void compare(const char* name, const std::function<array(const array&)>& f, const array& x, std::size_t copied,
             int rounds) {
  double staged = time_pmap(f, x, rounds);
  am::detail::set_stages_enabled(false);
  double plain = time_pmap(f, x, rounds);
  am::detail::set_stages_enabled(true);
  double copy = time_memcpy(copied, rounds);
  fmt::print("{:<13} stages {:8.3f} ms   one plan {:8.3f} ms   memcpy of {:5.1f} MiB {:8.3f} ms   "
             "stages/one plan {:5.2f}x   vs memcpy {:5.2f}x\n",
             name, staged * 1e3, plain * 1e3, static_cast<double>(copied) / (1 << 20), copy * 1e3, plain / staged,
             copy / staged);
  am::bench::ratio_line(plain / staged, std::string(name) + ": speed with stages / as one plan");
  am::bench::ratio_line(copy / staged, std::string(name) + ": speed / a memcpy of the bytes it moves");
}

} // namespace

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "pmap's all_gather, psum_scatter and ppermute stages over 8 CPU devices, against memcpy peers");
  const auto floats = flag.integer("--floats", 262144, "float32 per device");
  const auto rounds = static_cast<int>(flag.integer("--rounds", 20, "timed rounds"));
  flag.finish();
  am::options opts;
  opts.cpu_devices = 8;
  opts.use_gpus = false;
  am::runtime rt(argc, argv, opts);
  auto devices = am::local_devices();
  auto n = static_cast<std::int64_t>(devices.size());
  fmt::print("bench_pmap_stages: {} CPU devices, {} hardware threads, {} float32 a device (loaded machine unless "
             "stated)\n",
             n, std::thread::hardware_concurrency(), floats);
  auto x = am::device_put(am::host_array::full({n, floats}, 0.5, am::dtype::float32), devices);
  x.block_until_ready();
  auto slice = static_cast<std::size_t>(floats) * sizeof(float);
  auto all = static_cast<std::size_t>(n) * slice;
  std::vector<std::pair<int, int>> ring;
  for (int i = 0; i < n; ++i)
    ring.emplace_back(i, static_cast<int>((i + 1) % n));
  compare("all_gather", [](const array& a) { return am::all_gather(a, "i", 0, true); }, x,
          all * static_cast<std::size_t>(n), rounds);
  compare("psum_scatter", [](const array& a) { return am::psum_scatter(a, "i", 0, true); }, x, all, rounds);
  compare("ppermute", [ring](const array& a) { return am::ppermute(a, "i", ring); }, x, all, rounds);
  return 0;
}

int main(int argc, char** argv) { return am::bench::guarded_main("bench_pmap_stages", run, argc, argv); }
