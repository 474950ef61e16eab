// The CPU devices' compute gate (devices/cpu/cpu_compute_gate.hpp): never more holders than slots,
// first come first served, small stages and the gate off never wait, and turning it off (or
// shrinking it) mid-wait neither loses nor leaks a slot. Also the programs through it: results are
// unchanged with the gate on.
#include "support/arrays.hpp"

#include "devices/cpu/cpu_compute_gate.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

using am::detail::compute_slot;
using am::detail::gated_stage_elements;
using am::detail::set_cpu_compute_slots;

namespace {

/// Restores the gate as it was when the test started.
struct gate_scope {
  int before = am::detail::cpu_compute_slots();
  ~gate_scope() { set_cpu_compute_slots(before); }
};

} // namespace

TEST_CASE("the compute gate never lets more threads in than it has slots", "[cpu][gate]") {
  gate_scope restore;
  for (int slots : {1, 2, 3}) {
    set_cpu_compute_slots(slots);
    std::atomic<int> inside{0}, most{0}, done{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 12; ++t)
      threads.emplace_back([&] {
        for (int k = 0; k < 40; ++k) {
          compute_slot slot(gated_stage_elements);
          int now = ++inside;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          std::this_thread::sleep_for(std::chrono::microseconds(50));
          --inside;
        }
        ++done;
      });
    for (auto& t : threads)
      t.join();
    CHECK(done == 12);
    CHECK(most <= slots);
    CHECK(most >= 1);
  }
}

TEST_CASE("the compute gate serves waiters in the order they came", "[cpu][gate]") {
  gate_scope restore;
  set_cpu_compute_slots(1);
  std::vector<int> order;
  std::mutex m;
  std::atomic<int> queued{0};
  std::vector<std::thread> threads;
  {
    compute_slot first(gated_stage_elements); // holds the only slot while the others line up
    for (int t = 0; t < 6; ++t) {
      threads.emplace_back([&, t] {
        ++queued;
        compute_slot slot(gated_stage_elements);
        std::lock_guard<std::mutex> lock(m);
        order.push_back(t);
      });
      // Each thread is waiting before the next starts (bounded: 2 s).
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (queued.load() <= t && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  for (auto& t : threads)
    t.join();
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("small stages and a gate that is off never wait, turning it off frees every waiter", "[cpu][gate]") {
  gate_scope restore;
  set_cpu_compute_slots(1);
  compute_slot held(gated_stage_elements);
  {
    auto t0 = std::chrono::steady_clock::now();
    compute_slot small(gated_stage_elements - 1); // below the threshold: not gated
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  }
  std::atomic<int> through{0};
  std::vector<std::thread> waiters;
  for (int t = 0; t < 4; ++t)
    waiters.emplace_back([&] {
      compute_slot slot(gated_stage_elements);
      ++through;
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(through == 0); // all wait behind `held`
  set_cpu_compute_slots(0);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (through < 4 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(through == 4);
  for (auto& t : waiters)
    t.join();
  // On again with 1 slot: `held` and the waiters' slots were counted back, so one is free again
  // once `held` goes (checked by the next holder not waiting forever).
  set_cpu_compute_slots(1);
}

TEST_CASE("jitted programs on 8 devices give the same values with the compute gate on", "[cpu][gate][array]") {
  gate_scope restore;
  am::runtime rt(am::testing::eight_cpus());
  am::mesh m(am::create_device_mesh({8}, am::devices(am::platform::cpu)), {"x"});
  const std::int64_t n = 512; // 32768 elements per device: above the gate's threshold
  std::vector<float> v(static_cast<std::size_t>(n * n));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i % 977) * 0.01f - 4.0f;
  auto x = am::device_put(am::host_array::from_vector(v, {n, n}), am::make_named_sharding(m, am::P("x")));
  auto f = am::jit([](const am::array& a) { return am::sum(am::tanh(am::sin(a) * am::cos(a)) + am::sqrt(am::abs(a)), {1}); });
  set_cpu_compute_slots(0);
  auto off = f(x).to_host().to_vector<float>();
  set_cpu_compute_slots(2);
  std::vector<float> on;
  for (int k = 0; k < 5; ++k) // several rounds, all devices through 2 slots
    on = f(x).to_host().to_vector<float>();
  CHECK(on == off);
}
