// Random-number benchmark: am::uniform and am::normal of JAX's threefry2x32 values
// (float32, N x N on 8 CPU devices, split by rows), in elements per second, against a hand-written
// loop over the machine's cores calling the same generator functions (devices/detail/random_counter.hpp),
// compiled for the CPU's widest vectors (reference_random.hpp), with no runtime in between: the ratio is
// what the runtime and its kernels add or lose.
//
//   ./build/bench/bench_random [--n 4096] [--reps 5]
#include <actormesh.hpp>

#include "actormesh/sharding/mesh.hpp"
#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/random.hpp"

#include "bench_flags.hpp"
#include "bench_report.hpp"
#include "reference_random.hpp"

#include <fmt/core.h>

#include <functional>
#include <thread>
#include <vector>

namespace {

using am::bench::median_seconds;

/// The generator's loop (reference_random.hpp), element i of `out` = F(key, i), split over `threads`
/// threads.
double loop_seconds(void (*loop)(std::uint64_t, float*, std::int64_t, std::int64_t), int reps, std::vector<float>& out,
                    int threads) {
  auto n = static_cast<std::int64_t>(out.size());
  return median_seconds(reps, [&] {
    std::vector<std::thread> ts;
    for (int k = 0; k < threads; ++k)
      ts.emplace_back([&, k] {
        const auto begin = n * k / threads;
        loop(0x2a, out.data() + begin, begin, n * (k + 1) / threads);
      });
    for (auto& t : ts)
      t.join();
  });
}

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "am::uniform and am::normal (threefry2x32) over 8 CPU devices, against a loop over the cores");
  auto n = flag.integer("--n", 4096, "side of the square array");
  auto reps = static_cast<int>(flag.integer("--reps", 5, "timed repetitions (the median is reported)"));
  flag.finish();
  am::options opts;
  opts.cpu_devices = 8;
  opts.use_gpus = false;
  am::runtime rt(opts);
  am::mesh m(am::create_device_mesh({8}, am::devices()), {"x"});
  auto s = am::make_named_sharding(m, am::P("x"));
  auto key = am::wrap_key_data(0, 0x2a);
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<float> out(static_cast<std::size_t>(n * n));
  double elems = static_cast<double>(n * n);
  fmt::print("random values, float32 [{}, {}] on 8 CPU devices; peer: the same generator in a loop on {} threads\n",
             n, n, threads);
  struct row {
    const char* what;
    std::function<am::array()> make;
    std::function<double()> peer;
  };
  std::vector<row> rows{
      {"uniform", [&] { return am::uniform(key, {n, n}, s); },
       [&] { return loop_seconds(am::bench::uniform_float32_loop, reps, out, threads); }},
      {"normal", [&] { return am::normal(key, {n, n}, s); },
       [&] { return loop_seconds(am::bench::normal_float32_loop, reps, out, threads); }},
  };
  for (auto& r : rows) {
    double ours = median_seconds(reps, [&] { r.make().block_until_ready(); });
    double peer = r.peer();
    fmt::print("  {:<8} {:9.2f} ms  {:6.3f} Gelem/s   loop {:9.2f} ms   {:5.2f}x the loop\n", r.what, ours * 1e3,
               elems / ours / 1e9, peer * 1e3, peer / ours);
    am::bench::ratio_line(peer / ours, std::string(r.what) + ": speed / the same generator's loop");
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  return am::bench::guarded_main("bench_random", run, argc, argv);
}
