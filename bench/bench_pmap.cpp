// pmap, each figure against a peer measured in the same run:
//   1. psum over 8 CPU devices (in one process, a collective stage on one shared buffer) of F
//      float32 per device, against memcpy of the same bytes (8 x F x 4) between two host buffers;
//      target >= 0.5x; and the same psum without stages (one plan), for their effect.
//   2. one training step of a 2-layer MLP (batch B, width H: matmul dominates) under pmap over 8
//      CPU devices (pmean'd gradients, parameters updated inside), against the same step jitted on
//      one device (target >= 1.7x faster) and against JAX's pmap of the same step (target >= 1.0x).
//   3. the seed's training loop (the tour's linear regression on 2 devices, S steps) against JAX's.
// JAX runs in bench/jax_pmap_peer.py (XLA_FLAGS=--xla_force_host_platform_device_count=8), found
// through $AM_JAX_PYTHON, else /work/venv-jax/bin/python, else python3; without JAX the JAX
// columns are skipped with a message. Medians of R timed runs after one warm-up; ratios are
// peer time / our time (higher is better).
//
//   ./build/bench/bench_pmap [--floats 2097152] [--psum-rounds 20] [--batch 4096] [--width 512] [--rounds 5]
//                            [--steps 1000]
#include <actormesh.hpp>

#include "bench_flags.hpp"
#include "bench_paths.hpp"
#include "actormesh/parallel/detail/staged_pmap.hpp"
#include "bench_report.hpp"

#include <fmt/core.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

using am::array;
using am::bench::median_seconds;

namespace {

am::host_array sample(const am::shape_t& shape, unsigned seed, double scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::int64_t n = 1;
  for (auto e : shape)
    n *= e;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v)
    x = static_cast<float>(d(rng) * scale);
  return am::host_array::from_vector(v, shape);
}

/// The interpreter that runs the JAX peer.
std::string jax_python() {
  if (const char* p = std::getenv("AM_JAX_PYTHON"))
    return p;
  if (FILE* f = std::fopen("/work/venv-jax/bin/python", "r")) {
    std::fclose(f);
    return "/work/venv-jax/bin/python";
  }
  return "python3";
}

/// Runs the JAX peer with `args`; returns its "name seconds" lines, or an empty vector (with the
/// reason printed) when JAX is missing or the peer fails.
std::vector<std::pair<std::string, double>> run_jax_peer(const std::string& args) {
  std::string script = am::bench::source_dir() + "/jax_pmap_peer.py";
  std::string cmd = "XLA_FLAGS=--xla_force_host_platform_device_count=8 " + jax_python() + " " + script + " " + args
                    + " 2>&1";
  std::vector<std::pair<std::string, double>> out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    fmt::print("JAX peer: cannot start '{}'\n", cmd);
    return out;
  }
  std::array<char, 512> line{};
  std::string text;
  while (std::fgets(line.data(), static_cast<int>(line.size()), p)) {
    text += line.data();
    char name[128];
    double seconds = 0;
    if (std::sscanf(line.data(), "result %127s %lf", name, &seconds) == 2)
      out.emplace_back(name, seconds);
  }
  int rc = pclose(p);
  if (rc != 0 || out.empty()) {
    fmt::print("JAX peer skipped (exit status {}): {}", rc, text.empty() ? "no output\n" : text);
    out.clear();
  }
  return out;
}

double jax_figure(const std::vector<std::pair<std::string, double>>& jax, const std::string& name) {
  for (auto& [n, s] : jax)
    if (n == name)
      return s;
  return 0;
}

void print_vs_jax(const char* what, double ours, double theirs, const char* target) {
  if (theirs <= 0) {
    fmt::print("{:<44} {:>10.3f} ms   JAX: skipped\n", what, ours * 1e3);
    return;
  }
  fmt::print("{:<44} {:>10.3f} ms   JAX {:>10.3f} ms   {:.2f}x  (target {})\n", what, ours * 1e3, theirs * 1e3,
             theirs / ours, target);
  am::bench::ratio_line(theirs / ours, std::string(what) + ": speed / JAX's");
}

/// 1. psum over every device against memcpy of the same bytes.
void psum_vs_memcpy(const std::vector<am::device>& devices, std::int64_t floats, int rounds) {
  auto n = static_cast<std::int64_t>(devices.size());
  auto x = am::device_put(sample({n, floats}, 1, 1.0), devices);
  x.block_until_ready();
  auto all_reduce = am::pmap([](const array& a) { return am::psum(a, "i"); }, "i", {0}, {am::none});
  // The first calls fill the devices' buffer pools (fresh pages cost more than the sums): a few more
  // warm-up calls, so that the median is the steady state.
  for (int k = 0; k < 3; ++k)
    all_reduce(x).block_until_ready();
  double ours = median_seconds(rounds, [&] { all_reduce(x).block_until_ready(); });
  std::size_t bytes = static_cast<std::size_t>(n * floats) * sizeof(float);
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  double copy = median_seconds(rounds, [&] {
    std::memcpy(dst.data(), src.data(), bytes);
    asm volatile("" : : "r"(dst.data()) : "memory");
  });
  double mib = static_cast<double>(bytes) / (1 << 20);
  fmt::print("psum over {} devices, {} float32 each ({:.0f} MiB in all): {:.3f} ms ({:.2f} GB/s)\n", n, floats, mib,
             ours * 1e3, static_cast<double>(bytes) / ours / 1e9);
  fmt::print("memcpy of the same {:.0f} MiB: {:.3f} ms ({:.2f} GB/s)\n", mib, copy * 1e3,
             static_cast<double>(bytes) / copy / 1e9);
  fmt::print("psum / memcpy bandwidth: {:.2f}x  (target >= 0.5x)\n", copy / ours);
  am::bench::ratio_line(copy / ours, "psum over the devices: bandwidth / memcpy's of the same bytes");
  // The same psum without collective stages (one plan: reduce-scatter and all-gather through the
  // plan's shard moves), for the stages' effect in the same run.
  am::detail::set_stages_enabled(false);
  auto one_plan = am::pmap([](const array& a) { return am::psum(a, "i"); }, "i", {0}, {am::none});
  for (int k = 0; k < 3; ++k)
    one_plan(x).block_until_ready();
  double plain = median_seconds(rounds, [&] { one_plan(x).block_until_ready(); });
  am::detail::set_stages_enabled(true);
  fmt::print("psum as one plan (no stages): {:.3f} ms, {:.2f}x memcpy; stages are {:.1f}x faster\n\n", plain * 1e3,
             copy / plain, plain / ours);
}

/// The MLP's loss: mean squared error of tanh(x w1) w2 against y.
array mlp_loss(const array& w1, const array& w2, const array& x, const array& y) {
  return am::mean(am::square(am::matmul(am::tanh(am::matmul(x, w1)), w2) - y));
}

constexpr double mlp_rate = 0.01;

/// 2. One MLP training step: 8 devices under pmap, one device under jit, JAX's pmap.
void mlp_step(const std::vector<am::device>& devices, std::int64_t batch, std::int64_t width, int rounds,
              const std::vector<std::pair<std::string, double>>& jax) {
  auto n = static_cast<std::int64_t>(devices.size());
  auto w1 = am::device_put(sample({width, width}, 2, 0.05), devices[0]);
  auto w2 = am::device_put(sample({width, width}, 3, 0.05), devices[0]);
  auto xh = sample({batch, width}, 4, 1.0), yh = sample({batch, width}, 5, 1.0);
  auto grads = am::grad(mlp_loss, {0, 1});
  auto parallel_step = am::pmap([&](const array& a, const array& b, const array& x, const array& y) {
    auto g = grads(a, b, x, y);
    return std::make_tuple(a - am::pmean(g[0], "d") * mlp_rate, b - am::pmean(g[1], "d") * mlp_rate);
  }, "d", {am::none, am::none, 0, 0}, {am::none});
  auto xs = am::device_put(xh.reshape({n, batch / n, width}), devices);
  auto ys = am::device_put(yh.reshape({n, batch / n, width}), devices);
  double eight = median_seconds(rounds, [&] {
    auto [a, b] = parallel_step(w1, w2, xs, ys);
    a.block_until_ready();
    b.block_until_ready();
  });
  auto single_step = am::jit([&](const array& a, const array& b, const array& x, const array& y) {
    auto g = grads(a, b, x, y);
    return std::make_tuple(a - g[0] * mlp_rate, b - g[1] * mlp_rate);
  });
  auto x1 = am::device_put(xh, devices[0]), y1 = am::device_put(yh, devices[0]);
  double one = median_seconds(rounds, [&] {
    auto [a, b] = single_step(w1, w2, x1, y1);
    a.block_until_ready();
    b.block_until_ready();
  });
  // The two steps agree (the same update, summed in another order).
  auto [p8, q8] = parallel_step(w1, w2, xs, ys);
  auto [p1, q1] = single_step(w1, w2, x1, y1);
  auto a = p8.to_host().to_vector<float>(), b = p1.to_host().to_vector<float>();
  double diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff = std::max(diff, static_cast<double>(std::abs(a[i] - b[i])));
  // 5 products of 2 x batch x width x width: 2 forward, 3 backward (no gradient of the data).
  double flop = 5 * 2.0 * static_cast<double>(batch) * width * width;
  fmt::print("MLP step, batch {} width {} ({:.1f} GFLOP), float32; 8-device and 1-device w1 differ by {:.2e}\n", batch,
             width, flop / 1e9, diff);
  fmt::print("{:<44} {:>10.3f} ms   ({:.1f} GFLOP/s)\n", "pmap over 8 CPU devices", eight * 1e3, flop / eight / 1e9);
  fmt::print("{:<44} {:>10.3f} ms   ({:.1f} GFLOP/s)\n", "jit on 1 CPU device", one * 1e3, flop / one / 1e9);
  fmt::print("8 devices / 1 device speed-up: {:.2f}x  (target >= 1.7x)\n", one / eight);
  print_vs_jax("pmap over 8 CPU devices vs JAX's pmap", eight, jax_figure(jax, "mlp_pmap8"), ">= 1.0x");
  print_vs_jax("jit on 1 CPU device vs JAX's jit", one, jax_figure(jax, "mlp_jit1"), "-");
  fmt::print("\n");
}

/// 3. The seed's training loop (demos/pmap_tour): linear regression on 2 devices.
void seed_training(const std::vector<am::device>& all, long long steps,
                   const std::vector<std::pair<std::string, double>>& jax) {
  std::vector<am::device> devices(all.begin(), all.begin() + 2);
  auto loss_fn = [](const array& w, const array& b, const array& x, const array& y) {
    return am::mean(am::square(w * x + b - y));
  };
  auto value_and_grad_fn = am::value_and_grad(loss_fn, {0, 1});
  auto step = am::pmap([value_and_grad_fn](const array& w, const array& b, const array& x, const array& y) {
    auto [loss, g] = value_and_grad_fn(w, b, x, y);
    return std::make_tuple(am::pmean(loss, "devices"), am::pmean(g[0], "devices"), am::pmean(g[1], "devices"));
  }, "devices", {am::none, am::none, 0, 0}, {am::none});
  auto xh = am::host_array::arange(8.0, am::dtype::float64).reshape({2, -1});
  auto xv = xh.to_vector<double>();
  std::vector<double> yv;
  for (double x : xv)
    yv.push_back(3 * x + 2);
  auto x = am::device_put(xh, devices), y = am::device_put(am::host_array::from_vector(yv, xh.shape()), devices);
  double wf = 0;
  double ours = median_seconds(1, [&] {
    auto w = am::device_put(am::host_array::scalar(2.0), devices[0]);
    auto b = am::device_put(am::host_array::scalar(1.0), devices[0]);
    for (long long s = 0; s < steps; ++s) {
      auto [l, dw, db] = step(w, b, x, y);
      w = w - dw * 0.02;
      b = b - db * 0.02;
    }
    wf = w.to_host().item<double>();
  });
  fmt::print("seed training, {} steps on 2 devices (w = {:.4f}): {:.3f} ms, {:.1f} us/step\n", steps, wf, ours * 1e3,
             ours / static_cast<double>(steps) * 1e6);
  print_vs_jax("seed training loop vs JAX's", ours, jax_figure(jax, "seed_training"), ">= 1.0x");
}

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "pmap's psum against memcpy, the data-parallel MLP step and the seed's training loop against JAX");
  const auto floats = flag.integer("--floats", 2 << 20, "float32 per device");
  const auto batch = flag.integer("--batch", 4096, "batch (rows of the inputs)");
  const auto width = flag.integer("--width", 512, "width of the MLP layers");
  const auto rounds = static_cast<int>(flag.integer("--rounds", 5, "timed rounds"));
  const auto steps = flag.integer("--steps", 1000, "steps of the training loop");
  const auto psum_rounds = static_cast<int>(flag.integer("--psum-rounds", 20, "timed rounds of the psum figure"));
  flag.finish();
  if (batch % 8 != 0)
    throw std::invalid_argument("--batch must be a multiple of 8");
  // JAX first, alone on the cores (its process ends before ours starts its devices).
  auto jax = run_jax_peer(fmt::format("--batch {} --width {} --rounds {} --steps {}", batch, width, rounds, steps));
  am::options opts;
  opts.cpu_devices = 8;
  opts.use_gpus = false;
  am::runtime rt(argc, argv, opts);
  auto devices = am::local_devices();
  fmt::print("bench_pmap: {} CPU devices, {} hardware threads (loaded machine unless stated)\n\n", devices.size(),
             std::thread::hardware_concurrency());
  psum_vs_memcpy(devices, floats, psum_rounds);
  mlp_step(devices, batch, width, rounds, jax);
  seed_training(devices, steps, jax);
  return 0;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_pmap", run, argc, argv); }
