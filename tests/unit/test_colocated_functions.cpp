// Colocated functions: registration by name, calls that take and return trees of arrays on CPU
// devices, the synchronous first call that learns the output specs, specialization (in_specs,
// out_specs_fn, devices) and JAX's errors. Ordering and concurrency: test_colocated_order.cpp.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <map>
#include <thread>
#include "support/colocated_values.hpp"
#include "support/cpu_options.hpp"

using namespace std::chrono_literals;

namespace {

using am::testing::value_of;

template <class F>
std::string value_error_of(F&& f) {
  try {
    f();
  } catch (const am::value_error& e) {
    return e.what();
  }
  return "(no value_error)";
}

/// A gate a body waits at until the test opens it (bounded, so a broken test fails, not hangs).
struct gate {
  std::promise<void> opened;
  std::shared_future<void> wait_here = opened.get_future().share();
  void open() { opened.set_value(); }
};
std::atomic<gate*> current_gate{nullptr};
std::atomic<int> body_runs{0};

const auto add_one = am::colocated_python("test.add_one", [](const am::array& x) {
  ++body_runs;
  return x + 1;
});

const auto gated_add_one = am::colocated_python("test.gated_add_one", [](const am::array& x) {
  if (gate* g = current_gate.load())
    g->wait_here.wait_for(30s);
  ++body_runs;
  return x + 1;
});

const auto host_local_sum = am::colocated_python("test.host_local_sum", [](const am::array& x) {
  // The body sees its inputs on its own host: it may read them (and block while it does).
  auto h = x.to_host();
  auto values = h.to_vector<float>();
  float total = 0;
  for (float v : values)
    total += v;
  return x * 0.0f + total;
});

const auto tree_fn = am::colocated_python(
  "test.tree_fn", [](const std::vector<am::array>& xs, const std::tuple<am::array, am::array>& pair) {
    std::map<std::string, am::array> out;
    out["sum"] = xs.at(0) + xs.at(1);
    out["diff"] = std::get<0>(pair) - std::get<1>(pair);
    return out;
  });

const auto write_file = am::colocated_python("test.write_file", [] {
  std::ofstream("/tmp/am_colocated_test_foo") << "foo";
});

const auto throws = am::colocated_python("test.throws", [](const am::array& x) -> am::array {
  if (value_of(x) < 0)
    throw am::value_error("negative input");
  return x;
});

const auto takes_host_array = am::colocated_python("test.takes_host_array", [](const am::host_array& h) {
  return am::device_put(h, am::devices()[0]);
});

const auto returns_host_array = am::colocated_python("test.returns_host_array",
                                                     [](const am::array& x) { return x.to_host(); });

const auto two_args = am::colocated_python("test.two_args",
                                           [](const am::array& x, const am::array& y) { return x + y; });

using am::testing::same_as_first;

} // namespace

TEST_CASE("colocated function: the seed's f(x) = x + 1 keeps the sharding", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  auto x = am::testing::scalar_on_first(1);
  auto y = add_one(x);
  CHECK(value_of(y) == 2);
  CHECK(y.sharding()->device_assignment() == x.sharding()->device_assignment());
  CHECK(y.sharding()->is_equivalent_to(*x.sharding(), 0));
  CHECK(value_of(add_one(y)) == 3);
}

TEST_CASE("colocated function: the first call of a signature waits for the body, later ones do not",
          "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  auto x = am::testing::scalar_on_first(1);
  CHECK(gated_add_one.known_signatures() == 0);
  int before = body_runs;
  auto y1 = gated_add_one(x); // no gate: runs now and learns the output specs
  CHECK(body_runs == before + 1);
  CHECK(gated_add_one.known_signatures() == 1);

  gate g;
  current_gate = &g;
  auto y2 = gated_add_one(x); // same signature: returns before the body has run
  CHECK(body_runs == before + 1);
  CHECK_FALSE(y2.addressable_shards()[0].data.ready());
  g.open();
  CHECK(value_of(y2) == 2);
  current_gate = nullptr;
  CHECK(body_runs == before + 2);

  auto z = gated_add_one(am::testing::scalar_on_first(1, 2)); // another signature (two devices): learned again
  CHECK(gated_add_one.known_signatures() == 2);
  CHECK(value_of(z) == 2);
}

TEST_CASE("colocated function: with out_specs_fn even the first call is asynchronous", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  auto f = gated_add_one.specialize({.out_specs_fn = same_as_first});
  auto x = am::testing::scalar_on_first(5);
  gate g;
  current_gate = &g;
  int before = body_runs;
  auto y = f(x);
  CHECK(body_runs == before);
  CHECK(y.shape() == am::shape_t{});
  CHECK(y.dtype() == x.dtype());
  g.open();
  CHECK(value_of(y) == 6);
  current_gate = nullptr;
}

TEST_CASE("colocated function: in_specs fixes the accepted input", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  auto x = am::testing::scalar_on_first(1);
  auto cpu_sharding = x.sharding();
  am::shape_dtype_struct spec{{}, x.dtype(), cpu_sharding};
  auto f = add_one.specialize({.in_specs = am::spec_tree::tuple({spec}),
                               .out_specs_fn = [spec](const am::spec_tree&) { return am::spec_tree(spec); }});
  CHECK(value_of(f(x)) == 2);
  auto other = am::device_put(am::host_array::from_vector(std::vector<int>{1, 2}), cpu_sharding);
  auto msg = value_error_of([&] { f(other); });
  CHECK_THAT(msg, Catch::StartsWith("Input specs in specialization and input specs of arguments must have the same "
                                    "pytree structure, but they have the following structural differences:"));
}

TEST_CASE("colocated function: specializing a field twice is an error", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  auto spec = am::spec_tree::of(std::tuple{am::testing::scalar_on_first(1)});
  auto f = add_one.specialize({.in_specs = spec, .out_specs_fn = same_as_first, .devices = am::devices()});
  CHECK(value_error_of([&] { f.specialize({.in_specs = spec}); }) == "in_specs already specified");
  CHECK(value_error_of([&] { f.specialize({.out_specs_fn = same_as_first}); }) == "out_specs_fn already specified");
  CHECK(value_error_of([&] { f.specialize({.devices = am::devices()}); }) == "devices already specified");
}

TEST_CASE("colocated function: a function without inputs needs devices", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  std::remove("/tmp/am_colocated_test_foo");
  CHECK(value_error_of([] { write_file(); })
        == "No devices found. colocated_python function without input arguments must be first specialized with "
           "devices.");
  auto f = write_file.specialize({.devices = am::colocated_cpu_devices(am::devices())});
  f().get(30s);
  std::string text;
  std::ifstream("/tmp/am_colocated_test_foo") >> text;
  CHECK(text == "foo");
}

TEST_CASE("colocated function: inputs on different device lists are an error", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  auto x = am::device_put(am::host_array::scalar(1), am::devices()[0]);
  auto y = am::device_put(am::host_array::scalar(2), am::devices()[1]);
  CHECK_THAT(value_error_of([&] { two_args(x, y); }),
             Catch::StartsWith("All arguments must use the same device list, but got multiple device lists: "
                               "{[CpuDevice(id=0)], [CpuDevice(id=1)]}"));
  CHECK(value_of(two_args(x, x)) == 2);
}

TEST_CASE("colocated function: specialized with devices in another order, it follows its inputs' order",
          "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  auto devs = am::devices();
  am::mesh m({2}, {devs[0], devs[1]}, {"x"});
  auto x = am::device_put(am::host_array::from_vector(std::vector<int>{1, 2}), am::make_named_sharding(m, am::P("x")));
  for (bool async : {false, true}) {
    auto f = async ? add_one.specialize({.out_specs_fn = same_as_first, .devices = std::vector{devs[1], devs[0]}})
                   : add_one.specialize({.devices = std::vector{devs[1], devs[0]}});
    auto y = f(x);
    CHECK(y.to_host().to_vector<int>() == std::vector<int>{2, 3});
    CHECK(y.sharding()->device_assignment() == x.sharding()->device_assignment()); // [0, 1], as the input
    CHECK(y.addressable_shards()[0].device.id == devs[0].id);
  }
  // Devices that are not the inputs' are still refused.
  am::mesh one({1}, {devs[0]}, {"x"});
  auto x0 = am::device_put(am::host_array::scalar(1), am::make_named_sharding(one, am::P()));
  auto on_1 = add_one.specialize({.devices = std::vector{devs[1]}});
  CHECK_THAT(value_error_of([&] { on_1(x0); }), Catch::Contains("but the function was specialized with devices"));
}

TEST_CASE("colocated function: values that are not arrays are an error", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  auto x = am::testing::scalar_on_first(1);
  CHECK(value_error_of([] { takes_host_array(am::host_array::scalar(1)); })
        == "colocated_python only supports jax.Array (am::array) as input and output, but got am::host_array.");
  CHECK(value_error_of([&] { returns_host_array(x); })
        == "colocated_python only supports jax.Array (am::array) as input and output, but got am::host_array.");
}

TEST_CASE("colocated function: trees of arrays in and out", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  auto a = am::testing::scalar_on_first(5);
  auto b = am::testing::scalar_on_first(3);
  for (int round = 0; round < 2; ++round) { // the second round is the asynchronous path
    auto out = tree_fn(std::vector<am::array>{a, b}, std::tuple{a, b});
    REQUIRE(out.size() == 2);
    CHECK(value_of(out.at("sum")) == 8);
    CHECK(value_of(out.at("diff")) == 2);
  }
  CHECK(tree_fn.known_signatures() == 1);
}

TEST_CASE("colocated function: the body sees its inputs' data on the host", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(4));
  am::mesh m({4}, am::devices(), {"x"});
  auto x = am::device_put(am::host_array::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}),
                          am::make_named_sharding(m, am::P("x")));
  for (int round = 0; round < 2; ++round) {
    auto y = host_local_sum(x);
    CHECK(y.sharding()->is_equivalent_to(*x.sharding(), 1));
    CHECK(y.to_host().to_vector<float>() == std::vector<float>(8, 36.0f));
  }
}

TEST_CASE("colocated function: the body's exception reaches the caller", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  CHECK(value_error_of([] { throws(am::testing::scalar_on_first(-1)); }) == "negative input"); // first call: thrown at once
  CHECK(value_of(throws(am::testing::scalar_on_first(1))) == 1);                              // learns the specs
  auto y = throws(am::testing::scalar_on_first(-1));                                          // asynchronous: in the array
  CHECK(value_error_of([&] { y.block_until_ready(); }) == "negative input");
}

TEST_CASE("colocated function: results that break the promised output specs fail the outputs",
          "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  auto x = am::testing::scalar_on_first(1);
  auto wrong = add_one.specialize({.out_specs_fn = [](const am::spec_tree& in) {
    auto leaf = in.leaves()[0];
    leaf.shape = {3};
    return am::spec_tree(leaf);
  }});
  auto y = wrong(x);
  CHECK(y.shape() == am::shape_t{3});
  CHECK_THAT(value_error_of([&] { y.block_until_ready(); }), Catch::StartsWith("colocated_python: output 0 is"));
}

TEST_CASE("colocated function: names are registered once, looked up with their signature", "[unit][colocated]") {
  CHECK_THROWS_AS(am::colocated_python("test.add_one", [](const am::array& x) { return x; }), am::value_error);
  am::runtime rt(am::test::cpu_options(1));
  auto again = am::colocated_function<am::array(am::array)>::registered("test.add_one");
  CHECK(value_of(again(am::testing::scalar_on_first(41))) == 42);
  CHECK_THROWS_AS(am::colocated_function<am::array(am::array, am::array)>::registered("test.add_one"), am::type_error);
  CHECK_THROWS_AS(am::colocated_function<am::array(am::array)>::registered("test.nothing"), am::value_error);
}

TEST_CASE("colocated function: refused inside jit, where its inputs are traced values", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  auto jitted = am::jit([](const am::array& v) { return add_one(v); });
  CHECK_THAT(value_error_of([&] { jitted(am::testing::scalar_on_first(1)); }),
             Catch::StartsWith("colocated_python: 'test.add_one' was called inside jit with a traced value"));
}

TEST_CASE("colocated function: an output spec without a sharding is refused, and not kept", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  int asked = 0;
  auto f = add_one.specialize({.out_specs_fn = [&asked](const am::spec_tree& in) {
    auto leaf = in.leaves()[0];
    if (asked++ == 0)
      leaf.sharding = nullptr;
    return am::spec_tree(leaf);
  }});
  auto x = am::testing::scalar_on_first(1);
  CHECK_THAT(value_error_of([&] { f(x); }),
             Catch::StartsWith("colocated_python: out_specs_fn returned a spec without a sharding"));
  CHECK(value_of(f(x)) == 2); // asked again: the refused specs were not cached
  CHECK(asked == 2);
}
