// pmap with collectives over every device (AM_CPU_DEVICES: ctest runs this at 1, 8 and 64), called
// from several threads at once on different data: each call's stages between the per-device
// programs must pair only with the same call's, so every result is checked exactly.
#include "support/stress.hpp"

#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

namespace {

/// `threads` callers each run `calls` pmaps (psum, ppermute, all_gather, psum_scatter, axis_index)
/// and count the wrong results.
int wrong_results(int threads, int calls) {
  am::runtime rt(am::test::stress_options());
  auto devs = am::devices();
  auto n = static_cast<std::int64_t>(devs.size());
  std::vector<std::pair<int, int>> shift;
  for (int i = 0; i < n; ++i)
    shift.emplace_back(i, static_cast<int>((i + 1) % n));
  auto f = am::pmap(
    [&](const am::array& x) {
      auto total = am::psum(x, "i");                          // [n]
      auto rolled = am::ppermute(x, "i", shift);              // the previous device's row
      auto gathered = am::sum(am::all_gather(x, "i"), {0});   // the same as total
      auto scattered = am::psum_scatter(x, "i");              // total[axis_index]
      auto index = am::astype(am::axis_index("i"), am::dtype::float64);
      return std::make_tuple(total - gathered, rolled, scattered - index * static_cast<double>(n));
    },
    "i");
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < threads; ++t)
    callers.emplace_back([&, t] {
      for (int c = 0; c < calls; ++c) {
        // Row i is t + c + i repeated: psum over rows of column j is sum_i (t + c + i).
        std::vector<double> v;
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t j = 0; j < n; ++j)
            v.push_back(static_cast<double>(t + c) + static_cast<double>(i));
        auto x = am::device_put(am::host_array::from_vector(v, {n, n}), devs);
        auto [zero, rolled, scattered] = f(x);
        auto z = zero.to_host().to_vector<double>();
        auto r = rolled.to_host().to_vector<double>();
        auto s = scattered.to_host().to_vector<double>();
        bool ok = true;
        double column = 0;
        for (std::int64_t i = 0; i < n; ++i)
          column += static_cast<double>(t + c) + static_cast<double>(i);
        for (std::int64_t i = 0; i < n; ++i) {
          ok = ok && s[static_cast<std::size_t>(i)] == column - static_cast<double>(i * n);
          for (std::int64_t j = 0; j < n; ++j) {
            auto k = static_cast<std::size_t>(i * n + j);
            ok = ok && z[k] == 0.0 && r[k] == static_cast<double>(t + c) + static_cast<double>((i + n - 1) % n);
          }
        }
        if (!ok)
          ++wrong;
      }
    });
  for (auto& c : callers)
    c.join();
  return wrong.load();
}

} // namespace

TEST_CASE("pmap collectives from concurrent callers give exact results", "[stress][pmap]") {
  auto threads = GENERATE(1, 2, 4);
  INFO(threads << " threads");
  CHECK(wrong_results(threads, am::test::scaled_by_devices(64, 4)) == 0);
}
