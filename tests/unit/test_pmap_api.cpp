// pmap's interface: one shard per device, in_axes/out_axes variants and broadcast arguments
// (against JAX's results in tests/data/pmap_jax_reference.txt), device_put to a device list, jit,
// grad and vmap inside pmap, tracing once per signature, and JAX's errors.
#include "grad_test_support.hpp"

#include <stdexcept>

using namespace am;
using namespace am::testing;
using namespace grad_test;

namespace {

host_array y_data() { return host_array::arange(1.0, 9.0, 1.0, dtype::float64).reshape({4, 2}); }

} // namespace

TEST_CASE("pmap runs on one device per slice and returns one shard per device", "[pmap]") {
  runtime rt(eight_cpus());
  auto devs = am::devices(platform::cpu);
  std::vector<device> two(devs.begin(), devs.begin() + 2);
  auto data = host_array::arange(8.0, dtype::float64).reshape({2, 4});
  auto sharded = device_put(data, two);
  REQUIRE(sharded.addressable_shards().size() == 2);
  CHECK(sharded.addressable_shards()[1].index[0].start == 1);
  auto complex_computation = [](const array& x) {
    auto y = sin(x) * cos(x);
    auto z = tanh(y) + sqrt(abs(x));
    return z * 2.0;
  };
  auto f = pmap(complex_computation);
  auto result = f(sharded);
  CHECK(result.shape() == shape_t{2, 4});
  auto shards = result.addressable_shards();
  REQUIRE(shards.size() == 2);
  CHECK(shards[0].device.id == two[0].id);
  CHECK(shards[1].device.id == two[1].id);
  CHECK(all_close(values(result), values(complex_computation(device_put(data, on_4x2(P())))), 1e-12, 1e-12));
  // Traced once per signature; jit inside changes nothing; one program per device, no stages.
  f(sharded);
  CHECK(f.cache_size() == 1);
  CHECK_THAT(f.lowered_text(sharded), Catch::StartsWith("2 programs in 1 stage(s)"));
  CHECK(values(pmap(jit(complex_computation))(sharded)) == values(result));
  // With the devices given explicitly.
  CHECK(values(pmap(complex_computation, "", {0}, {0}, two)(sharded)) == values(result));
}

TEST_CASE("in_axes and out_axes variants match JAX", "[pmap]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  auto y = device_put(y_data(), s);
  auto b = device_put(host_array::from_vector(std::vector<double>{10.0, 20.0}), s);
  auto mul = [](const array& a, const array& c) { return a * c; };
  CHECK(values(pmap(mul, "", {0, am::none})(y, b)) == std::vector<double>{10, 40, 30, 80, 50, 120, 70, 160});
  auto twice = [](const array& a) { return a * 2.0; };
  auto along1 = pmap(twice, "", {1})(transpose(y));
  CHECK(values(along1) == std::vector<double>{2, 4, 6, 8, 10, 12, 14, 16});
  auto out1 = pmap(twice, "", {0}, {1})(y);
  CHECK(out1.shape() == shape_t{2, 4});
  CHECK(values(out1) == std::vector<double>{2, 6, 10, 14, 4, 8, 12, 16});
  auto once = pmap([](const array& a) { return psum(a, "i"); }, "i", {0}, {am::none})(y);
  CHECK(once.shape() == shape_t{2});
  CHECK(values(once) == std::vector<double>{16, 20});
  // A broadcast argument and an unmapped output stacked by out_axes 0.
  auto stacked = pmap([](const array&, const array& c) { return c + 1.0; }, "", {0, am::none})(y, b);
  CHECK(stacked.shape() == shape_t{4, 2});
  CHECK(values(stacked) == std::vector<double>{11, 21, 11, 21, 11, 21, 11, 21});
}

TEST_CASE("pmap of value_and_grad with pmean'd gradients: the seed's training step", "[pmap][grad]") {
  runtime rt(eight_cpus());
  auto devs = am::devices(platform::cpu);
  std::vector<device> two(devs.begin(), devs.begin() + 2);
  auto loss_fn = [](const array& w, const array& b, const array& x, const array& y) {
    return mean(square(w * x + b - y));
  };
  auto step = pmap(
    [&](const array& w, const array& b, const array& x, const array& y) {
      auto [loss, grads] = value_and_grad(loss_fn, {0, 1})(w, b, x, y);
      return std::make_tuple(pmean(loss, "devices"), pmean(grads[0], "devices"), pmean(grads[1], "devices"));
    },
    "devices", {am::none, am::none, 0, 0}, {am::none});
  auto xh = host_array::arange(8.0, dtype::float64).reshape({2, 4});
  auto yh = sample({2, 4}, 41, -0.5, 0.5);
  {
    auto yv = yh.to_vector<double>();
    auto xv = xh.to_vector<double>();
    for (std::size_t i = 0; i < yv.size(); ++i)
      yv[i] += 3 * xv[i] + 2;
    yh = host_array::from_vector(yv, {2, 4});
  }
  auto x = device_put(xh, two), y = device_put(yh, two);
  auto w = device_put(host_array::scalar(2.0), two[0]);
  auto b = device_put(host_array::scalar(1.0), two[0]);
  auto [loss, dw, db] = step(w, b, x, y);
  CHECK(loss.shape() == shape_t{});
  // Against the whole batch on one device: the mean of the two halves' gradients.
  auto full_x = device_put(xh.reshape({8}), two[0]), full_y = device_put(yh.reshape({8}), two[0]);
  auto [l, g] = value_and_grad(loss_fn, {0, 1})(w, b, full_x, full_y);
  CHECK(loss.to_host().item<double>() == Approx(l.to_host().item<double>()).epsilon(1e-12));
  CHECK(dw.to_host().item<double>() == Approx(g[0].to_host().item<double>()).epsilon(1e-12));
  CHECK(db.to_host().item<double>() == Approx(g[1].to_host().item<double>()).epsilon(1e-12));
  // Training converges to the least-squares fit, which the noise moves a little from w = 3, b = 2.
  for (int it = 0; it < 3000; ++it) {
    auto out = step(w, b, x, y);
    w = w - std::get<1>(out) * 0.02;
    b = b - std::get<2>(out) * 0.02;
  }
  auto xv = xh.to_vector<double>(), yv = yh.to_vector<double>();
  double sx = 0, sy = 0, sxx = 0, sxy = 0, n = static_cast<double>(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i) {
    sx += xv[i];
    sy += yv[i];
    sxx += xv[i] * xv[i];
    sxy += xv[i] * yv[i];
  }
  auto w_fit = (n * sxy - sx * sy) / (n * sxx - sx * sx), b_fit = (sy - w_fit * sx) / n;
  CHECK(w.to_host().item<double>() == Approx(w_fit).epsilon(1e-9));
  CHECK(b.to_host().item<double>() == Approx(b_fit).epsilon(1e-9));
  CHECK(w_fit == Approx(3.0).margin(0.1));
  CHECK(b_fit == Approx(2.0).margin(0.5));
}

TEST_CASE("pmap of an MLP's gradient: per-device matmuls, pmean'd gradients equal the whole batch's", "[pmap][grad]") {
  runtime rt(eight_cpus());
  auto devs = am::devices(platform::cpu);
  std::vector<device> four(devs.begin(), devs.begin() + 4);
  auto loss = [](const array& w1, const array& w2, const array& x, const array& y) {
    return mean(square(matmul(tanh(matmul(x, w1)), w2) - y));
  };
  auto step = pmap([&](const array& w1, const array& w2, const array& x, const array& y) {
    auto g = grad(loss, {0, 1})(w1, w2, x, y);
    return std::make_tuple(pmean(g[0], "d"), pmean(g[1], "d"));
  }, "d", {am::none, am::none, 0, 0}, {am::none});
  auto w1 = device_put(sample({6, 8}, 50), four[0]), w2 = device_put(sample({8, 3}, 51), four[0]);
  auto xh = sample({4, 5, 6}, 52), yh = sample({4, 5, 3}, 53);
  auto [g1, g2] = step(w1, w2, device_put(xh, four), device_put(yh, four));
  // The forward pass alone needs nothing from other devices: one program per device.
  auto forward = pmap([](const array& w1, const array& w2, const array& x) { return matmul(tanh(matmul(x, w1)), w2); },
                      "d", {am::none, am::none, 0});
  CHECK_THAT(forward.lowered_text(w1, w2, device_put(xh, four)), Catch::StartsWith("4 programs in 1 stage(s)"));
  auto whole = grad(loss, {0, 1})(w1, w2, device_put(xh.reshape({20, 6}), four[0]),
                                  device_put(yh.reshape({20, 3}), four[0]));
  CHECK(all_close(values(g1), values(whole[0]), 1e-12, 1e-12));
  CHECK(all_close(values(g2), values(whole[1]), 1e-12, 1e-12));
}

TEST_CASE("pmap inside jit and grad", "[pmap][grad][jit]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  auto centered = pmap(
    [](const array& a) { return a * psum(a, "i") - ppermute(a, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}}); }, "i");
  auto x = device_put(sample({4, 3}, 54), s);
  auto direct = values(centered(x));
  auto jitted = jit([&](const array& a) { return centered(a); });
  CHECK(values(jitted(x)) == direct);
  // The gradient of a loss computed by pmap, by finite differences.
  check_gradients([&](const array& a) { return sum(square(centered(a))); }, {sample({4, 3}, 55)}, s);
  check_gradients([&](const array& a) {
    auto g = pmap(
      [](const array& b) { return sum(square(all_gather(b, "i", 0, true))) * psum_scatter(b, "i", 0, true); }, "i");
    return sum(tanh(g(a)));
  }, {sample({4, 8}, 56)}, s);
}

TEST_CASE("pmap inside jit and grad of an argument already in pmap's layout", "[pmap][grad][jit]") {
  // device_put to a list of devices gives pmap's layout; inside a trace, pmap's own device_put of
  // that (equivalent) layout used to read the traced value's buffers ("unexpected tracer").
  runtime rt(eight_cpus());
  auto devs = am::devices(platform::cpu);
  std::vector<device> four(devs.begin(), devs.begin() + 4);
  auto x = device_put(sample({4, 3}, 57), four);
  auto f = pmap([](const array& a) { return sin(a) * psum(a, "i"); }, "i");
  auto direct = values(f(x));
  CHECK(values(jit([&](const array& a) { return f(a); })(x)) == direct);
  CHECK(values(jit([&](const array& a) { return sum(f(a)); })(x)) == values(sum(f(x))));
  check_gradients([&](const array& a) { return sum(square(f(a))); }, {sample({4, 3}, 58)}, x.sharding());
  auto g = grad([&](const array& a) { return sum(f(a)); });
  CHECK(g(x).shape() == shape_t{4, 3});
}

TEST_CASE("a pmap inside a pmap: collectives over either axis", "[pmap]") {
  // JAX 0.10 refuses this (its pmap is a shard_map whose meshes must match); ours maps the inner
  // axis like vmap inside each outer device, and the collectives of both axes hold.
  runtime rt(eight_cpus());
  auto devs = am::devices(platform::cpu);
  std::vector<device> two(devs.begin(), devs.begin() + 2);
  auto z = device_put(host_array::arange(8.0, dtype::float64).reshape({2, 4}), two);
  auto inner = [](const array& b) { return psum(b, "i") * 10.0 + psum(b, "j") + axis_index("j") * 100.0; };
  auto nested = pmap([&](const array& a) { return pmap(inner, "j")(a); }, "i");
  // Row sums (over j) 6 and 22; column sums (over i) 4, 6, 8, 10.
  CHECK(values(nested(z)) == std::vector<double>{46, 166, 286, 406, 62, 182, 302, 422});
}

TEST_CASE("vmap inside pmap: per-device batches of items", "[pmap][vmap]") {
  runtime rt(eight_cpus());
  auto devs = am::devices(platform::cpu);
  std::vector<device> two(devs.begin(), devs.begin() + 2);
  auto process_item = [](const array& item) { return tanh(item) * 2.0; };
  auto process_batch_of_items = [&](const array& batch) { return vmap(process_item)(batch); };
  auto data = host_array::arange(24.0, dtype::float64).reshape({2, 3, 4});
  auto result = pmap(process_batch_of_items)(device_put(data, two));
  CHECK(result.shape() == shape_t{2, 3, 4});
  CHECK(all_close(values(result), values(process_item(device_put(data, on_4x2(P())))), 1e-12, 1e-12));
  // A collective over the pmap axis inside the vmapped function.
  auto centered = pmap([](const array& batch) {
    return vmap([](const array& item) { return item - pmean(item, "d"); })(batch);
  }, "d")(device_put(data, two));
  auto whole = device_put(data, on_4x2(P()));
  CHECK(all_close(values(centered), values(whole - mean(whole, {0})), 1e-12, 1e-12));
}

TEST_CASE("pmap refuses what JAX refuses, with JAX's words", "[pmap][errors]") {
  runtime rt(eight_cpus());
  auto s = on_4x2(P());
  auto y = device_put(y_data(), s);
  auto id = [](const array& a) { return a; };
  CHECK_THROWS_WITH(pmap(id, "", {am::none})(y), "pmap requires at least one argument with a mapped axis.");
  CHECK_THROWS_WITH(pmap([](const array& a) { return psum(a, "batch"); }, "i")(y), "unbound axis name: batch");
  auto nine = device_put(host_array::arange(18.0, dtype::float64).reshape({9, 2}), s);
  CHECK_THROWS_WITH(pmap(id)(nine), "compiling computation that requires 9 logical devices, but only 8 XLA devices "
                                    "are available (num_replicas=9)");
  auto devs = am::devices(platform::cpu);
  CHECK_THROWS_WITH(pmap(id, "", {0}, {0}, {devs[0], devs[1]})(y),
                    "Leading axis size of input to pmapped function must equal the number of local devices passed "
                    "to pmap. Got axis_size=4, num_local_devices=2.");
  auto three = device_put(host_array::arange(3.0, dtype::float64), s);
  CHECK_THROWS_WITH(pmap([](const array& a, const array& c) { return a + c; })(y, three),
                    Catch::StartsWith("pmap got inconsistent sizes for array axes to be mapped:\n"));
  CHECK_THROWS_WITH(pmap(id, "", {0, 0})(y), "pmap in_axes specification must be a tree prefix of the corresponding "
                                             "value, got specification (0, 0) for value tree PyTreeDef((*,)).");
  CHECK_THROWS_WITH(psum(y, "i"), "unbound axis name: i");
  // A hostile user's arguments: each refused with a reason, none reaching the devices.
  CHECK_THROWS_WITH(pmap(id, "i", {0}, {0}, {devs[0], devs[0], devs[1], devs[2]})(y),
                    "pmap got CpuDevice(id=0) more than once in its devices (positions 0 and 1): each mapped slice "
                    "needs a device of its own");
  CHECK_THROWS_WITH(pmap([](const array& a) { return all_gather(a, "i", -9); }, "i")(y),
                    "axis -9 is out of bounds for array of dimension 2"); // JAX's words
  CHECK_THROWS_WITH(pmap([](const array& a) { return all_gather(a, "i", 9); }, "i")(y),
                    "axis 9 is out of bounds for array of dimension 2");
  CHECK_THROWS_WITH(pmap([](const array& a) { return psum_scatter(a, "i", 5, true); }, "i")(y),
                    "psum_scatter: axis 5 is out of bounds for array of dimension 1");
  CHECK_THROWS_WITH(grad([&](const array& a) { return pmap(id, "i")(a); })(device_put(y_data(), devs[0])),
                    "Gradient only defined for scalar-output functions. Output had shape: (4, 2).");
  CHECK_THROWS_WITH(pmap([](const array&) -> array { throw std::runtime_error("boom"); }, "i")(y), "boom");
  CHECK(values(pmap(id, "i")(y)) == values(y)); // still usable after a throwing function
}
