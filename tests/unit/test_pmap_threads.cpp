// One pmapped function and one gradient called from many threads at once (a hostile user's
// program): every call gets its own correct values, each signature is traced once, and nothing
// throws. Bounded: 8 threads x 30 rounds of small arrays, under ctest's time limit.
#include "grad_test_support.hpp"

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

using namespace am;
using namespace am::testing;

TEST_CASE("many threads call one pmapped function and one grad at once", "[pmap][grad][threads]") {
  runtime rt(eight_cpus());
  auto devs = am::devices(platform::cpu);
  // x - pmean(x) + psum(x) of slices that all hold t + 1: 8 (t + 1) everywhere.
  auto f = pmap([](const array& a) { return a - pmean(a, "i") + psum(a, "i"); }, "i");
  // d/dw sum((x w)^2) at ones: 2 x^T (x w) = 2 * 5 * 4 = 40 everywhere.
  auto g = grad([](const array& w, const array& x) { return sum(square(matmul(x, w))); });
  std::atomic<int> wrong{0};
  std::atomic<int> failed{0};
  std::string first_error;
  std::mutex error_mutex;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int r = 0; r < 30; ++r) {
          // Three signatures (widths), large enough for psum's two-stage path.
          auto x = device_put(host_array::full({8, 1024 + (r % 3) * 8}, double(t + 1), dtype::float32), devs);
          for (float v : f(x).to_host().to_vector<float>())
            if (v != 8.0f * static_cast<float>(t + 1)) {
              ++wrong;
              break;
            }
          auto w = device_put(host_array::full({4, 3}, 1.0, dtype::float64), devs[static_cast<std::size_t>(t)]);
          auto a = device_put(host_array::full({5, 4}, 1.0, dtype::float64), devs[static_cast<std::size_t>(t)]);
          for (double v : g(w, a).to_host().to_vector<double>())
            if (v != 40.0) {
              ++wrong;
              break;
            }
        }
      } catch (const std::exception& e) {
        ++failed;
        std::lock_guard<std::mutex> guard(error_mutex);
        first_error = e.what();
      }
    });
  for (auto& t : threads)
    t.join();
  INFO(first_error);
  CHECK(failed == 0);
  CHECK(wrong == 0);
  CHECK(f.cache_size() == 3);
}
