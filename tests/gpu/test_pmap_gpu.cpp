// pmap on CUDA devices: every collective of pmap over the process's GPUs (one
// on a one-GPU machine) against the same pmap over as many CPU devices (the reference), and a
// data-parallel MLP training step (grad, pmean'd gradients) on the GPUs against the CPU devices.
// Skipped (exit 4, with discovery's reason) without a usable GPU. Run by tests/gpu/pmap_gpu_check.sh.
#include "gpu/gpu_support.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

using am::array;
using am::testing::require_gpu;

namespace {

/// A runtime with the GPUs and as many CPU devices.
am::options gpus_and_cpus() {
  am::options o;
  o.cpu_devices = static_cast<int>(std::max<std::size_t>(1, am::discover_gpus(true).count));
  return o;
}

std::vector<double> values(const array& a) { return a.to_host().astype(am::dtype::float64).to_vector<double>(); }

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol, const char* what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    bad += std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])) ? 0 : 1;
  CHECK(bad == 0);
}

/// The first n CPU devices, n = the number of GPUs.
std::vector<am::device> cpus_like(const std::vector<am::device>& gpus) {
  auto cpus = am::devices(am::platform::cpu);
  cpus.resize(gpus.size());
  return cpus;
}

} // namespace

TEST_CASE("every pmap collective on the GPUs agrees with the CPU devices", "[gpu][pmap]") {
  require_gpu();
  am::runtime rt(gpus_and_cpus());
  auto gpus = am::devices(am::platform::cuda);
  auto cpus = cpus_like(gpus);
  auto n = static_cast<std::int64_t>(gpus.size());
  std::vector<std::pair<int, int>> ring;
  for (int i = 0; i < n; ++i)
    ring.emplace_back(i, static_cast<int>((i + 1) % n));
  // Slices of 4n rows of `width` float32: 8 (128 n bytes a device: the collectives stay in the
  // plan) and 32768 (512 n KiB a device: in one process, collectives of 64 KiB or more a device are
  // stages, NCCL operations on the GPUs, parallel/detail/staged_pmap.hpp).
  for (std::int64_t width : {8, 32768}) {
    INFO("slices of " << 4 * n << " x " << width);
    auto data = am::host_array::arange(1.0, 1.0 + static_cast<double>(n * 4 * n * width), 1.0, am::dtype::float32)
                  .reshape({n, 4 * n, width});
    auto on_gpus = am::device_put(data, gpus), on_cpus = am::device_put(data, cpus);
    auto compare = [&](const char* name, auto f) {
      auto p = am::pmap(f, "i");
      check_close(values(p(on_gpus)), values(p(on_cpus)), 1e-6, name);
    };
    compare("psum", [](const array& x) { return am::psum(x, "i"); });
    compare("pmean", [](const array& x) { return am::pmean(x, "i"); });
    compare("pmax", [](const array& x) { return am::pmax(x, "i"); });
    compare("pmin", [](const array& x) { return am::pmin(x, "i"); });
    compare("all_gather", [](const array& x) { return am::all_gather(x, "i", 0, false); });
    compare("all_gather tiled", [](const array& x) { return am::all_gather(x, "i", 1, true); });
    compare("ppermute", [&](const array& x) { return am::ppermute(x, "i", ring); });
    compare("psum_scatter", [](const array& x) { return am::psum_scatter(x, "i", 0, true); });
    compare("axis_index", [](const array& x) { return x * am::astype(am::axis_index("i"), x.dtype()); });
    compare("a psum feeding the next program", [](const array& x) { return am::sin(am::psum(x * 2.0f, "i")) + x; });
  }
  // A large psum (the reduce-scatter then all-gather path) too.
  auto big = am::host_array::full({n, 1 << 20}, 0.5, am::dtype::float32);
  auto p = am::pmap([](const array& x) { return am::psum(x, "i"); }, "i", {0}, {am::none});
  check_close(values(p(am::device_put(big, gpus))), values(p(am::device_put(big, cpus))), 1e-6, "large psum");
}

TEST_CASE("a data-parallel MLP training step on the GPUs agrees with the CPU devices", "[gpu][pmap][grad]") {
  require_gpu();
  am::runtime rt(gpus_and_cpus());
  auto gpus = am::devices(am::platform::cuda);
  auto cpus = cpus_like(gpus);
  auto n = static_cast<std::int64_t>(gpus.size());
  auto loss = [](const array& w1, const array& w2, const array& x, const array& y) {
    return am::mean(am::square(am::matmul(am::tanh(am::matmul(x, w1)), w2) - y));
  };
  auto step = am::pmap([&](const array& w1, const array& w2, const array& x, const array& y) {
    auto g = am::grad(loss, {0, 1})(w1, w2, x, y);
    return std::make_tuple(w1 - am::pmean(g[0], "d") * 0.1, w2 - am::pmean(g[1], "d") * 0.1);
  }, "d", {am::none, am::none, 0, 0}, {am::none});
  auto sample = [](am::shape_t shape, double scale) {
    std::int64_t count = 1;
    for (auto e : shape)
      count *= e;
    std::vector<float> v(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<float>(scale * std::sin(0.37 * static_cast<double>(i) + 0.1));
    return am::host_array::from_vector(v, shape);
  };
  auto w1 = sample({64, 128}, 0.1), w2 = sample({128, 16}, 0.1);
  auto x = sample({n, 256, 64}, 1.0), y = sample({n, 256, 16}, 1.0);
  auto on = [&](const std::vector<am::device>& devs) {
    auto a = am::device_put(w1, devs[0]), b = am::device_put(w2, devs[0]);
    auto xs = am::device_put(x, devs), ys = am::device_put(y, devs);
    for (int k = 0; k < 5; ++k)
      std::tie(a, b) = step(a, b, xs, ys);
    return std::make_pair(values(a), values(b));
  };
  auto [g1, g2] = on(gpus);
  auto [c1, c2] = on(cpus);
  check_close(g1, c1, 1e-4, "w1 after 5 steps");
  check_close(g2, c2, 1e-4, "w2 after 5 steps");
}
