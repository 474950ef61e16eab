// deferred_wakeups (devices/detail/lane_calls.hpp): calls issued inside the scope are queued at once
// but their devices are woken only when the outermost scope ends (or on flush); order holds; a
// runtime stopped meanwhile fails the held calls instead of leaving them waiting.
#include "support/arrays.hpp"
#include "support/programs.hpp"

#include "devices/detail/lane_calls.hpp"

#include <catch2/catch.hpp>

#include <thread>

using namespace std::chrono_literals;
using am::detail::deferred_wakeups;
using am::testing::expected_chain;
using am::testing::from_bytes;
using am::testing::step_program;
using am::testing::to_bytes;

namespace {

am::options four_devices() {
  am::options o;
  o.cpu_devices = 4;
  o.use_gpus = false;
  return o;
}

am::value_type int64x4() {
  return {am::dtype::int64, {4}};
}

/// A device's first element after the chain `x`'s calls ran.
std::int64_t first_of(const am::device& d, const am::shard_future& x) {
  return from_bytes<std::int64_t>(am::fetch(d, x).get(10s)).at(0);
}

} // namespace

TEST_CASE("calls issued inside the scope wait for its end, on every device", "[calls][deferred]") {
  am::runtime rt(four_devices());
  auto devs = am::devices();
  std::vector<am::shard_future> before;
  for (auto& d : devs) {
    before.push_back(am::upload(d, to_bytes(std::vector<std::int64_t>{1, 1, 1, 1}), int64x4()));
    before.back().get(10s); // nothing of this thread pending: the next call needs its own wake-up
  }
  std::vector<am::shard_future> inside;
  {
    deferred_wakeups together;
    for (std::size_t i = 0; i < devs.size(); ++i)
      inside.push_back(am::execute(devs[i], step_program(static_cast<std::int64_t>(i)), {before[i]})[0]);
    std::this_thread::sleep_for(50ms); // ample time for a woken device to run a 4-element program
    for (auto& f : inside)
      CHECK_FALSE(f.ready());
  }
  for (std::size_t i = 0; i < devs.size(); ++i)
    CHECK(first_of(devs[i], inside[i]) == expected_chain(1, static_cast<std::int64_t>(i), 1));
}

TEST_CASE("nested scopes wake the devices when the outermost ends; flush wakes them at once",
          "[calls][deferred]") {
  am::runtime rt(four_devices());
  auto d = am::devices()[2];
  auto x = am::upload(d, to_bytes(std::vector<std::int64_t>{0, 0, 0, 0}), int64x4());
  x.get(10s);
  deferred_wakeups outer;
  am::shard_future y;
  {
    deferred_wakeups inner;
    y = am::execute(d, step_program(5), {x})[0];
  }
  std::this_thread::sleep_for(30ms);
  CHECK_FALSE(y.ready()); // the inner scope's end is not the outermost
  deferred_wakeups::flush();
  CHECK(first_of(d, y) == expected_chain(0, 5, 1)); // the fetch rides on the flushed take message
}

TEST_CASE("a chain issued partly inside a scope keeps its order", "[calls][deferred]") {
  am::runtime rt(four_devices());
  auto d = am::devices()[1];
  auto x = am::upload(d, to_bytes(std::vector<std::int64_t>{2, 2, 2, 2}), int64x4());
  for (int s = 0; s < 30; ++s) {
    if (s % 3 == 0) {
      deferred_wakeups together;
      x = am::execute(d, step_program(s), {x})[0];
      x = am::execute(d, step_program(s + 1), {x})[0];
      ++s;
    } else {
      x = am::execute(d, step_program(s), {x})[0];
    }
  }
  CHECK(first_of(d, x) == expected_chain(2, 0, 30));
}

TEST_CASE("a runtime stopped while calls are held fails them; the scope then ends quietly",
          "[calls][deferred]") {
  am::runtime rt(four_devices());
  auto d = am::devices()[0];
  auto x = am::upload(d, to_bytes(std::vector<std::int64_t>{3, 3, 3, 3}), int64x4());
  x.get(10s);
  am::shard_future held;
  {
    deferred_wakeups together;
    held = am::execute(d, step_program(1), {x})[0];
    rt.stop();
  }
  REQUIRE(held.wait_for(10s));
  CHECK_THROWS_AS(held.get(), am::runtime_error);
}

TEST_CASE("a sharded operation on 8 devices gives the same values with its wake-ups held",
          "[calls][deferred]") {
  am::runtime rt(am::testing::eight_cpus());
  std::vector<double> v(64 * 16);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>(i);
  auto h = am::host_array::from_vector(v, {64, 16}).astype(am::dtype::float32);
  auto a = am::device_put(h, am::testing::on_4x2(am::P("x")));
  auto row_sums = am::testing::values(am::sum(a * 2.0 + 1.0, {1}));
  REQUIRE(row_sums.size() == 64);
  for (std::size_t r = 0; r < row_sums.size(); ++r) {
    double expected = 0;
    for (std::size_t c = 0; c < 16; ++c)
      expected += 2.0 * static_cast<double>(r * 16 + c) + 1.0;
    CHECK(row_sums[r] == Approx(expected));
  }
}
