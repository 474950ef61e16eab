// One array used by many threads while another thread deletes it: every use
// either completes with the right value or fails with JAX's deleted-array error; never a hang, a
// crash or a wrong value. Device count from the environment (support/stress.hpp).
#include "support/arrays.hpp"
#include "support/stress.hpp"
#include "support/watchdog.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <random>
#include <string>
#include <thread>

using namespace std::chrono_literals;

namespace {

/// The operations of the race, each ending in to_host: eager ones, a jitted one (traced once,
/// shared by all threads), and resharding.
constexpr int operation_count = 6;
am::host_array use(const am::array& x, int op) {
  static auto jitted = am::jit([](const am::array& a) { return am::sin(a) * 2.0 + a; }, "race");
  switch (op % operation_count) {
  case 0: return am::sin(x).to_host();
  case 1: return (x + 1.0).to_host();
  case 2: return am::matmul(x, x).to_host();
  case 3: return am::sum(x).to_host();
  case 4: return jitted(x).to_host();
  default: return am::device_put(x, am::devices().back()).to_host();
  }
}

struct race_counts {
  std::atomic<long> completed{0};
  std::atomic<long> refused{0};
  std::atomic<long> wrong{0};
  std::atomic<long> other_errors{0};
};

/// `threads` users and one deleter on a fresh (64, 64) array, `rounds` times.
void delete_while_used(int threads, int rounds) {
  am::runtime rt(am::test::stress_options());
  auto devs = am::devices();
  const auto n = static_cast<std::int64_t>(devs.size());
  am::mesh m(am::create_device_mesh({n}, devs), {"x"});
  auto layout = am::make_named_sharding(m, 64 % n == 0 ? am::P("x") : am::P());
  auto host = am::host_array::arange(64 * 64, am::dtype::float32).reshape({64, 64});

  // The values every completed use must produce, from an array nobody deletes.
  std::vector<std::vector<double>> expected;
  {
    auto ref = am::device_put(host, layout);
    for (int op = 0; op < operation_count; ++op)
      expected.push_back(am::testing::values(use(ref, op)));
  }

  race_counts counts;
  std::mt19937 rng(12345);
  for (int round = 0; round < rounds; ++round) {
    auto x = am::device_put(host, layout);
    std::atomic<bool> go{false};
    std::vector<std::thread> users;
    for (int t = 0; t < threads; ++t)
      users.emplace_back([&, t] {
        while (!go.load())
          std::this_thread::yield();
        for (int k = 0; k < 6; ++k) {
          int op = t + k;
          try {
            auto got = am::testing::values(use(x, op));
            if (am::testing::all_close(got, expected[static_cast<std::size_t>(op % operation_count)], 1e-4, 1e-4))
              ++counts.completed;
            else
              ++counts.wrong;
          } catch (const am::runtime_error& e) {
            if (std::string(e.what()).find("Array has been deleted with shape=float32[64,64].") == 0)
              ++counts.refused;
            else
              ++counts.other_errors;
          } catch (...) {
            ++counts.other_errors;
          }
        }
      });
    auto delay = std::chrono::microseconds(rng() % 3000);
    go.store(true);
    std::this_thread::sleep_for(delay);
    std::thread second_deleter([&] { x.delete_(); }); // deleting twice at once is a no-op
    x.delete_();
    second_deleter.join();
    for (auto& u : users)
      u.join();
    CHECK(x.is_deleted());
    CHECK_THROWS_WITH(x.to_host(), "Array has been deleted with shape=float32[64,64].");
  }
  INFO("completed " << counts.completed << ", refused " << counts.refused);
  CHECK(counts.wrong == 0);
  CHECK(counts.other_errors == 0);
  CHECK(counts.completed + counts.refused == static_cast<long>(threads) * 6 * rounds);
}

} // namespace

TEST_CASE("delete races uses of one array, 2 threads", "[stress][delete]") {
  am::test::run_bounded("delete race, 2 threads", 240s, [] { delete_while_used(2, 30); });
}

TEST_CASE("delete races uses of one array, 8 threads", "[stress][delete]") {
  am::test::run_bounded("delete race, 8 threads", 240s, [] { delete_while_used(8, 20); });
}

TEST_CASE("delete races uses of one array, 16 threads", "[stress][delete]") {
  am::test::run_bounded("delete race, 16 threads", 240s, [] { delete_while_used(16, 12); });
}
