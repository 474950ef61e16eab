
// Sharded-array benchmark: sin and the seed-004 complex_computation on 8192x8192 float32 over 8 CPU
// devices, eager and jitted, in elements per second, against a hand-written loop over both cores
// with the same math library and against a one-device array; plus the caller-side dispatch cost of
// a tiny operation on an 8-shard array.
//
// Then the loop and the jitted complex_computation in turn, --rounds rounds, with
// and without shared tiles (AM_CPU_SHARE_TILES) and with the compute gate (AM_CPU_COMPUTE_SLOTS), as
// medians and ranges of the per-round ratio.
//
//   ./build/bench/bench_sharding [--n 8192] [--reps 5] [--rounds 9]
#include "reference_loops.hpp"

#include <actormesh.hpp>

#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/jit.hpp"
#include "actormesh/sharding/mesh.hpp"
#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/ops.hpp"
#include "actormesh/sharding/single_device_sharding.hpp"

#include "devices/cpu/cpu_compute_gate.hpp"
#include "devices/cpu/cpu_region_runner.hpp"

#include "bench_flags.hpp"
#include "bench_report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

/// Median seconds of `reps` runs of `body` after one warm-up run (reps 0: the one run's seconds).
double median_seconds(int reps, const std::function<void()>& body) {
  if (reps == 0) {
    auto start = clock_type::now();
    body();
    return std::chrono::duration<double>(clock_type::now() - start).count();
  }
  body();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto start = clock_type::now();
    body();
    t.push_back(std::chrono::duration<double>(clock_type::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// The hand-written loop split over `threads` threads.
double reference_seconds(int reps, const std::vector<float>& x, std::vector<float>& out, int threads,
                         void (*loop)(const float*, float*, std::int64_t)) {
  auto n = static_cast<std::int64_t>(x.size());
  return median_seconds(reps, [&] {
    std::vector<std::thread> ts;
    for (int k = 0; k < threads; ++k)
      ts.emplace_back([&, k] {
        auto begin = n * k / threads, end = n * (k + 1) / threads;
        loop(x.data() + begin, out.data() + begin, end - begin);
      });
    for (auto& t : ts)
      t.join();
  });
}

/// seeds/004: y = sin(x) * cos(x); z = tanh(y) + sqrt(|x|); return z * 2.
am::array complex_computation(const am::array& x) {
  auto y = am::sin(x) * am::cos(x);
  auto z = am::tanh(y) + am::sqrt(am::abs(x));
  return z * 2.0;
}

void report(const char* what, double seconds, double elems, double anchor_seconds) {
  fmt::print("  {:<44} {:9.2f} ms  {:6.3f} Gelem/s  {:5.2f}x the hand-written loop\n", what, seconds * 1e3,
             elems / seconds / 1e9, anchor_seconds / seconds);
  am::bench::ratio_line(anchor_seconds / seconds, std::string(what) + ": speed / the hand-written loop's");
}

} // namespace

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "sin and the seed's complex_computation on 8 CPU devices, eager and jitted, against loops");
  const std::int64_t n = flag.integer("--n", 8192, "side of the square array");
  const int reps = flag.integer("--reps", 5, "timed repetitions (the median is reported)");
  const int rounds = static_cast<int>(flag.integer("--rounds", 9, "rounds of the loop against jit"));
  flag.finish();
  am::options opts;
  opts.cpu_devices = 8;
  opts.use_gpus = false;
  am::runtime rt(argc, argv, opts);
  const auto cores = std::max(1u, std::thread::hardware_concurrency());
  const double elems = static_cast<double>(n * n);

  std::vector<float> host(static_cast<std::size_t>(n * n)), out(host.size());
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<float>(i % 1000) * 0.001f - 0.5f;
  auto h = am::host_array::from_vector(host, {n, n});
  am::mesh m(am::create_device_mesh({8}, am::devices()), {"x"});
  auto sharded = am::device_put(h, am::make_named_sharding(m, am::P("x")));
  auto single = am::device_put(h, am::devices()[0]);
  sharded.block_until_ready();
  single.block_until_ready();

  fmt::print("sharded-array benchmark: {}x{} float32, 8 CPU devices, {} cores, SLEEF {} u35\n", n, n, cores,
             am::bench::reference_uses_avx512() ? "AVX-512" : "scalar");

  auto sin_ref = reference_seconds(reps, host, out, static_cast<int>(cores), am::bench::sin_loop);
  auto jsin = am::jit([](const am::array& x) { return am::sin(x); });
  fmt::print("sin:\n");
  report("hand-written loop, all cores (anchor)", sin_ref, elems, sin_ref);
  report("eager, 8 shards", median_seconds(reps, [&] { am::sin(sharded).block_until_ready(); }), elems, sin_ref);
  report("jit, 8 shards", median_seconds(reps, [&] { jsin(sharded).block_until_ready(); }), elems, sin_ref);
  report("eager, one device", median_seconds(reps, [&] { am::sin(single).block_until_ready(); }), elems, sin_ref);

  auto cc_ref = reference_seconds(reps, host, out, static_cast<int>(cores), am::bench::complex_computation_loop);
  auto jcc = am::jit(complex_computation);
  fmt::print("complex_computation ((tanh(sin*cos) + sqrt|x|) * 2):\n");
  report("hand-written loop, all cores (anchor)", cc_ref, elems, cc_ref);
  report("eager, 8 shards", median_seconds(reps, [&] { complex_computation(sharded).block_until_ready(); }),
         elems, cc_ref);
  auto jit_sharded = median_seconds(reps, [&] { jcc(sharded).block_until_ready(); });
  report("jit, 8 shards", jit_sharded, elems, cc_ref);
  report("jit, one device", median_seconds(reps, [&] { jcc(single).block_until_ready(); }), elems, cc_ref);
  auto cc_one_thread = reference_seconds(reps, host, out, 1, am::bench::complex_computation_loop);
  report("hand-written loop, one core", cc_one_thread, elems, cc_ref);

  // The loop and jit in turn, one run each per round (load from other processes
  // hits both alike), without and with the compute gate (devices/cpu/cpu_compute_gate.hpp).
  const int gate_before = am::detail::cpu_compute_slots();
  const bool sharing_before = am::detail::region_sharing();
  std::vector<double> t_loop, t_jit, t_alone, t_gate;
  for (int r = 0; r <= rounds; ++r) { // round 0 warms up
    auto a = reference_seconds(0, host, out, static_cast<int>(cores), am::bench::complex_computation_loop);
    am::detail::set_cpu_compute_slots(0);
    am::detail::set_region_sharing(true);
    auto b = median_seconds(0, [&] { jcc(sharded).block_until_ready(); });
    am::detail::set_region_sharing(false);
    auto c = median_seconds(0, [&] { jcc(sharded).block_until_ready(); });
    am::detail::set_region_sharing(true);
    am::detail::set_cpu_compute_slots(static_cast<int>(cores));
    auto d = median_seconds(0, [&] { jcc(sharded).block_until_ready(); });
    if (r > 0) {
      t_loop.push_back(a);
      t_jit.push_back(b);
      t_alone.push_back(c);
      t_gate.push_back(d);
    }
  }
  am::detail::set_cpu_compute_slots(gate_before);
  am::detail::set_region_sharing(sharing_before);
  auto stats = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return std::array<double, 3>{v[v.size() / 2], v.front(), v.back()};
  };
  auto l = stats(t_loop);
  fmt::print("complex_computation, {} interleaved rounds, median (min-max):\n", rounds);
  fmt::print("  {:<50} {:7.2f} ms ({:.2f}-{:.2f})\n", "hand-written loop, all cores", l[0] * 1e3, l[1] * 1e3,
             l[2] * 1e3);
  auto line = [&](const std::string& what, const std::vector<double>& t) {
    std::vector<double> ratio;
    for (std::size_t k = 0; k < t.size(); ++k)
      ratio.push_back(t_loop[k] / t[k]);
    auto v = stats(t), q = stats(ratio);
    fmt::print("  {:<50} {:7.2f} ms ({:.2f}-{:.2f})  {:.2f}x the loop ({:.2f}-{:.2f})\n", what, v[0] * 1e3,
               v[1] * 1e3, v[2] * 1e3, q[0], q[1], q[2]);
    am::bench::ratio_line(q[0], "complex_computation, " + what + ": speed / the loop's (median of rounds)");
  };
  line("jit, 8 shards (tiles shared, the default)", t_jit);
  line("jit, 8 shards, tiles not shared (AM_CPU_SHARE_TILES=0)", t_alone);
  line(fmt::format("jit, 8 shards, compute gate of {} slots", cores), t_gate);

  // Dispatch: the caller's cost of one tiny operation on an 8-shard array (no waiting per call).
  auto tiny = am::device_put(am::host_array::zeros({8, 8}, am::dtype::float32),
                             am::make_named_sharding(m, am::P("x")));
  tiny.block_until_ready();
  const int ops = 20000;
  am::array last = tiny;
  auto start = clock_type::now();
  for (int i = 0; i < ops; ++i)
    last = tiny + 1.0f;
  auto dispatch = std::chrono::duration<double, std::micro>(clock_type::now() - start).count() / ops;
  last.block_until_ready();
  fmt::print("dispatch of a tiny op on 8 shards: {:.2f} us per operation (caller side)\n", dispatch);
  fmt::print("targets: jit complex_computation >= 0.8x the loop ({}: {:.2f}x), dispatch <= 10 us ({})\n",
             jit_sharded * 0.8 <= cc_ref ? "met" : "missed", cc_ref / jit_sharded,
             dispatch <= 10 ? "met" : "missed");
  return 0;
}

int main(int argc, char** argv) { return am::bench::guarded_main("bench_sharding", run, argc, argv); }
