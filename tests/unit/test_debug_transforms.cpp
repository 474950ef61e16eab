// am::debug_print and am::debug_callback inside vmap and grad, against JAX 0.10.2's own output
// (printed by the same functions in Python): under vmap a callback runs once per example, in the
// examples' order, with that example's slice of each mapped value and the whole of each unmapped
// one, and once when no value is mapped; under grad it sees the primal values, once per call. A
// 0-d value prints as Python prints the number (JAX formats `{}` of a 0-d array as its item).
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include "support/cpu_options.hpp"
#include "support/stdout_capture.hpp"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

namespace {

using am::test::stdout_of;

am::array floats(std::int64_t n) { return am::device_put(am::host_array::arange(n, am::dtype::float32)); }

/// JAX's `g` of the debugging docs: prints its input and sin of it.
am::array print_and_sin(const am::array& x) {
  am::debug_print("g x: {}", x);
  auto y = am::sin(x);
  am::debug_print("g y: {}", y);
  return y;
}

} // namespace

TEST_CASE("debug_print inside vmap prints once per example, unmapped values whole", "[unit][debugging]") {
  am::runtime rt(am::test::cpu_options(2));
  auto f = am::vmap(
    [](const am::array& x, const am::array& w) {
      am::debug_print("x: {} w: {}", x, w);
      am::debug_print("w only: {}", w);
      return am::sin(x) * w;
    },
    {0, am::none});
  auto w = am::device_put(am::host_array::scalar(2.0f));
  const std::string once = "x: 0.0 w: 2.0\nx: 1.0 w: 2.0\nx: 2.0 w: 2.0\nw only: 2.0\n";
  CHECK(stdout_of([&] {
          f(floats(3), w);
          f(floats(3), w); // the cached plan prints again
          am::effects_barrier();
        }) == once + once);
  auto rows = am::host_array::arange(6, am::dtype::float32).reshape({2, 3});
  auto show = [](const char* what) {
    return [what](const am::array& r) {
      am::debug_print(std::string(what) + " {}", r);
      return r;
    };
  };
  CHECK(stdout_of([&] {
          am::vmap(show("row"))(am::device_put(rows));
          am::vmap(show("col"), {1})(am::device_put(rows));
          am::effects_barrier();
        }) == "row [0. 1. 2.]\nrow [3. 4. 5.]\ncol [0. 3.]\ncol [1. 4.]\ncol [2. 5.]\n");
}

TEST_CASE("debug_print inside grad shows the primal values, and vmap of grad each example", "[unit][debugging]") {
  am::runtime rt(am::test::cpu_options(2));
  auto one = am::device_put(am::host_array::scalar(1.0f));
  CHECK(stdout_of([&] {
          CHECK(am::grad(print_and_sin)(one).to_host().item<float>() == Approx(0.5403023f));
          am::effects_barrier();
        }) == "g x: 1.0\ng y: 0.8414709568023682\n");
  CHECK(stdout_of([&] {
          auto [value, slope] = am::value_and_grad(print_and_sin)(one);
          CHECK(value.to_host().item<float>() == Approx(0.84147096f));
          CHECK(slope.to_host().item<float>() == Approx(0.5403023f));
          am::effects_barrier();
        }) == "g x: 1.0\ng y: 0.8414709568023682\n");
  CHECK(stdout_of([&] {
          auto slopes = am::vmap(am::grad(print_and_sin))(floats(3)).to_host().to_vector<float>();
          CHECK(slopes[1] == Approx(0.5403023f));
          am::effects_barrier();
        }) == "g x: 0.0\ng x: 1.0\ng x: 2.0\ng y: 0.0\ng y: 0.8414709568023682\ng y: 0.9092974066734314\n");
}

TEST_CASE("debug_callback inside vmap of a batch split over devices: each device its own examples", "[unit][debugging]") {
  am::runtime rt(am::test::cpu_options(2));
  am::mesh m({2}, am::devices(), {"b"});
  auto batch = am::device_put(am::host_array::arange(8, am::dtype::float32).reshape({4, 2}),
                              am::make_named_sharding(m, am::P("b")));
  std::mutex mutex;
  std::vector<std::vector<float>> seen;
  auto f = am::jit(am::vmap([&](const am::array& row) {
    am::debug_callback(
      [&](const am::host_array& r) {
        std::lock_guard<std::mutex> guard(mutex);
        seen.push_back(r.to_vector<float>());
      },
      row);
    return row + 1.0f;
  }));
  auto out = f(batch);
  am::effects_barrier();
  CHECK(out.to_host().to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(seen.size() == 4); // split: each example once, on the device that holds it
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::vector<float>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
}

TEST_CASE("debug_print of a 0-d value prints the number as Python does", "[unit][debugging]") {
  am::runtime rt(am::test::cpu_options(1));
  auto f = am::jit([](const am::array& x, const am::array& xs) {
    am::debug_print("jit {} {}", am::sin(x), am::sin(xs));
    return x;
  });
  auto i = am::device_put(am::host_array::scalar(std::int32_t{7}));
  auto yes = am::device_put(am::host_array::scalar(true));
  CHECK(stdout_of([&] {
          f(am::device_put(am::host_array::scalar(1.0f)), am::device_put(am::host_array::full({2}, 1.0f)));
          am::debug_print("{} {} {}", i, yes, am::device_put(am::host_array::scalar(1e-5f)));
          am::effects_barrier();
        }) == "jit 0.8414709568023682 [0.84147096 0.84147096]\n7 True 9.999999747378752e-06\n");
}
