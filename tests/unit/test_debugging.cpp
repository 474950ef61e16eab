// JAX's debugging tools: debug_callback and debug_print run once per device with that device's
// shard, inside jit on every call (not only while tracing) and outside jit at once, in program
// order per device, after the work before them, inside pmap with each device's slice;
// effects_barrier waits for them; inspect_array_sharding gives a traced value's sharding once per
// signature; a format that does not fit, and values on different devices, are refused.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include "support/cpu_options.hpp"
#include "support/stdout_capture.hpp"

#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

using am::test::stdout_of;

/// What callbacks saw, one entry per call: the shard's values as a vector.
struct seen_shards {
  std::mutex mutex;
  std::vector<std::vector<float>> shards;
  void add(const am::host_array& h) {
    std::lock_guard<std::mutex> guard(mutex);
    shards.push_back(h.to_vector<float>());
  }
};

} // namespace

TEST_CASE("debug_callback inside jit runs on every call with each device's shard", "[unit][debugging]") {
  am::runtime rt(am::test::cpu_options(4));
  am::mesh m({4}, am::devices(), {"x"});
  auto x = am::device_put(am::host_array::arange(8, am::dtype::float32), am::make_named_sharding(m, am::P("x")));
  seen_shards seen;
  auto f = am::jit([&](const am::array& a) {
    auto y = a * 2.0f;
    am::debug_callback([&](const am::host_array& shard) { seen.add(shard); }, y);
    return y + 1.0f;
  });
  auto r1 = f(x);
  auto r2 = f(x + 1.0f);
  am::effects_barrier();
  CHECK(r1.to_host().to_vector<float>() == std::vector<float>{1, 3, 5, 7, 9, 11, 13, 15}); // the outputs are the function's only
  REQUIRE(seen.shards.size() == 8); // 4 devices, 2 calls: the second call is cached, and still calls back
  // In program order: the first call's shards, then the second's; each device its own block.
  CHECK(seen.shards[0] == std::vector<float>{0, 2});
  CHECK(seen.shards[3] == std::vector<float>{12, 14});
  CHECK(seen.shards[4] == std::vector<float>{2, 4});
  CHECK(seen.shards[7] == std::vector<float>{14, 16});
  (void)r2;
}

TEST_CASE("debug_callback of the jitted function's own argument and of two values", "[unit][debugging]") {
  am::runtime rt(am::test::cpu_options(4));
  am::mesh m({2}, {am::devices()[0], am::devices()[1]}, {"x"});
  auto x = am::device_put(am::host_array::arange(4, am::dtype::float32), am::make_named_sharding(m, am::P("x")));
  std::mutex mutex;
  std::vector<std::pair<std::vector<float>, std::vector<float>>> pairs;
  auto f = am::jit([&](const am::array& a) {
    am::debug_callback(
      [&](const am::host_array& in, const am::host_array& out) {
        std::lock_guard<std::mutex> guard(mutex);
        pairs.emplace_back(in.to_vector<float>(), out.to_vector<float>());
      },
      a, am::sin(a) * 0.0f + 5.0f);
    return a;
  });
  f(x);
  am::effects_barrier();
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].first == std::vector<float>{0, 1});
  CHECK(pairs[1].first == std::vector<float>{2, 3});
  CHECK(pairs[1].second == std::vector<float>{5, 5});
}

TEST_CASE("debug_print prints each device's shard, in order, inside and outside jit", "[unit][debugging]") {
  am::runtime rt(am::test::cpu_options(4));
  am::mesh m({2}, {am::devices()[0], am::devices()[1]}, {"x"});
  auto x = am::device_put(am::host_array::from_vector(std::vector<float>{1, 2, 3, 4}), am::make_named_sharding(m, am::P("x")));
  auto f = am::jit([](const am::array& a) {
    am::debug_print("inside: {}", a * 10.0f);
    return a;
  });
  const auto printed = stdout_of([&] {
    am::debug_print("outside: {} and {}", x, x + 1.0f);
    f(x);
    am::effects_barrier();
  });
  CHECK(printed == "outside: [1. 2.] and [2. 3.]\noutside: [3. 4.] and [4. 5.]\ninside: [10. 20.]\ninside: [30. 40.]\n");
  // A replicated value: every device holding it prints.
  auto everywhere = am::device_put(am::host_array::scalar(7), am::make_named_sharding(m, am::P()));
  CHECK(stdout_of([&] {
          am::debug_print("{}", everywhere);
          am::effects_barrier();
        }) == "7\n7\n");
}

TEST_CASE("debug_print and debug_callback refuse what they cannot do, at the call", "[unit][debugging]") {
  am::runtime rt(am::test::cpu_options(4));
  am::mesh m({2}, {am::devices()[0], am::devices()[1]}, {"x"});
  auto x = am::device_put(am::host_array::arange(4, am::dtype::float32), am::make_named_sharding(m, am::P("x")));
  CHECK_THROWS_WITH(am::debug_print("{} {} {}", x), Catch::Contains("does not fit 1 value(s)"));
  CHECK_THROWS_WITH(am::debug_print("{", x), Catch::Contains("am::debug_print: the format '{'"));
  auto elsewhere = am::device_put(am::host_array::arange(4, am::dtype::float32), am::devices()[3]);
  CHECK_THROWS_WITH(am::debug_callback([](const am::host_array&, const am::host_array&) {}, x, elsewhere),
                    Catch::Contains("its values must be on the same devices"));
  // A callback that throws is reported and dropped; later effects still run.
  int after = 0;
  am::debug_callback([](const am::host_array&) { throw am::value_error("boom"); }, x);
  am::debug_callback([&](const am::host_array&) { ++after; }, x);
  am::effects_barrier();
  CHECK(after == 2);
}

TEST_CASE("debug_print and debug_callback inside pmap: each device its own slice, collectives too", "[unit][debugging]") {
  am::runtime rt(am::test::cpu_options(4));
  auto data = am::host_array::arange(6, am::dtype::float32).reshape({3, 2}); // 3 devices, a [2] slice each
  auto show = am::pmap([](const am::array& a) {
    am::debug_print("slice {}", a);
    return a * 2.0f;
  });
  const auto printed = stdout_of([&] {
    auto r = show(data);
    CHECK(r.to_host().to_vector<float>() == std::vector<float>{0, 2, 4, 6, 8, 10});
    show(data); // cached: prints again
    am::effects_barrier();
  });
  CHECK(printed == "slice [0. 1.]\nslice [2. 3.]\nslice [4. 5.]\nslice [0. 1.]\nslice [2. 3.]\nslice [4. 5.]\n");
  // With a collective: the psum is the same on every device, and each device shows it.
  std::mutex mutex;
  std::vector<std::pair<std::vector<float>, std::vector<float>>> seen;
  auto total = am::pmap(
    [&](const am::array& a) {
      auto s = am::psum(a, "i");
      am::debug_callback(
        [&](const am::host_array& mine, const am::host_array& sum) {
          std::lock_guard<std::mutex> guard(mutex);
          seen.emplace_back(mine.to_vector<float>(), sum.to_vector<float>());
        },
        a, s);
      return s;
    },
    "i");
  auto r = total(data);
  am::effects_barrier();
  CHECK(r.to_host().to_vector<float>() == std::vector<float>{6, 9, 6, 9, 6, 9});
  REQUIRE(seen.size() == 3);
  for (std::size_t d = 0; d < 3; ++d) {
    CHECK(seen[d].first == std::vector<float>{float(2 * d), float(2 * d + 1)});
    CHECK(seen[d].second == std::vector<float>{6, 9});
  }
}

TEST_CASE("inspect_array_sharding gives the sharding at once outside jit, once per signature inside", "[unit][debugging]") {
  am::runtime rt(am::test::cpu_options(4));
  am::mesh m({4}, am::devices(), {"x"});
  auto split = am::make_named_sharding(m, am::P("x"));
  auto x = am::device_put(am::host_array::arange(8, am::dtype::float32), split);
  std::vector<std::string> seen;
  am::inspect_array_sharding(x, [&](const am::sharding_ptr& s) { seen.push_back(s->to_string()); });
  REQUIRE(seen.size() == 1);
  auto f = am::jit([&](const am::array& a) {
    auto y = a * 2.0f;
    am::inspect_array_sharding(y, [&](const am::sharding_ptr& s) {
      CHECK(s->is_equivalent_to(*split, 1)); // computation follows sharding
      seen.push_back(s->to_string());
    });
    return y;
  });
  f(x);
  f(x);
  CHECK(seen.size() == 2); // traced once: the cached call does not call back, as in JAX
}
