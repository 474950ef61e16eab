// pmap's reductions as collective stages between the per-device programs (parallel/detail/
// staged_pmap.hpp): one buffer shared by every device for a replicated result, the same values
// bit for bit as the one-plan path (detail::set_stages_enabled(false)), small reductions kept in
// the plan, reductions of unmapped values, stages in the middle of a function and in a training
// step, and many threads. Within one process, reductions of 64 KiB a device or more are stages.
#include "grad_test_support.hpp"
#include "stage_test_support.hpp"

#include "actormesh/parallel/detail/staged_pmap.hpp"

#include <cstring>
#include <limits>

using namespace am;
using namespace am::testing;
using namespace grad_test;
using namespace stage_test;

TEST_CASE("a psum over 8 devices is one buffer that every device shares", "[pmap][stages]") {
  runtime rt(eight_cpus());
  auto h = sample({8, 20000}, 7).astype(dtype::float32); // 80 KB a device: a stage (64 KiB or more)
  auto x = device_put(h, eight());
  auto r = pmap([](const array& a) { return psum(a, "i"); }, "i", {0}, {none})(x);
  CHECK(r.shape() == shape_t{20000});
  auto shards = r.addressable_shards();
  REQUIRE(shards.size() == 8);
  std::set<int> devices;
  for (auto& s : shards) {
    auto b = s.data.get();
    CHECK(b->data() == shards[0].data.get()->data());
    CHECK(b->device_id() == s.device.id);
    devices.insert(s.device.id);
  }
  CHECK(devices.size() == 8);
  // The sum in device order, as numpy sums float32 rows one after another.
  auto v = h.to_vector<float>();
  std::vector<float> expected(20000, 0.0f);
  for (int j = 0; j < 20000; ++j) {
    float acc = v[static_cast<std::size_t>(j)];
    for (int d = 1; d < 8; ++d)
      acc += v[static_cast<std::size_t>(d * 20000 + j)];
    expected[static_cast<std::size_t>(j)] = acc;
  }
  CHECK(r.to_host().to_vector<float>() == expected);
}

TEST_CASE("staged reductions give the one-plan path's values bit for bit", "[pmap][stages]") {
  runtime rt(eight_cpus());
  for (auto type : {dtype::float32, dtype::float64}) {
    INFO(static_cast<int>(type));
    auto x = device_put(sample({8, 6, 3000}, 11).astype(type), eight()); // 72 KB or more a device
    check_same_as_one_plan([](const array& a) { return a - psum(a, "i"); }, x);
    check_same_as_one_plan([](const array& a) { return pmean(tanh(a) * 2.0, "i") * a; }, x);
    check_same_as_one_plan([](const array& a) { return psum(psum(a, "i") * a, "i"); }, x);
    check_same_as_one_plan([](const array& a) { return pmax(a, "i") - pmin(exp(a), "i"); }, x);
    check_same_as_one_plan([](const array& a) { return all_gather(pmean(a, "i"), "i") + 1.0; }, x);
    check_same_as_one_plan([](const array& a) { return sum(pmean(a, "i")) * a + psum(sum(a), "i"); }, x);
  }
}

TEST_CASE("staged pmaps with in_axes and out_axes 1 and an output that is an argument", "[pmap][stages]") {
  runtime rt(eight_cpus());
  auto x = device_put(sample({6, 8, 3000}, 13), eight()[0]); // mapped along dim 1
  auto f = pmap([](const array& a) { return std::make_tuple(a * psum(a, "i"), a); }, "i", {1}, {1, 0});
  auto [staged_y, staged_a] = f(x);
  auto [plain_y, plain_a] = one_plan([&] { return f(x); });
  CHECK(staged_y.shape() == shape_t{6, 8, 3000});
  CHECK(bits(staged_y) == bits(plain_y));
  CHECK(staged_a.shape() == shape_t{8, 6, 3000});
  CHECK(bits(staged_a) == bits(plain_a));
}

TEST_CASE("pmax and pmin stages let NaN win", "[pmap][stages]") {
  runtime rt(eight_cpus());
  std::vector<double> v(8 * 4, 1.0);
  v[9] = std::numeric_limits<double>::quiet_NaN(); // device 2, element 1
  auto x = device_put(host_array::from_vector(v, {8, 4}), eight());
  auto mx = values(pmap([](const array& a) { return pmax(a, "i"); }, "i", {0}, {none})(x));
  auto mn = values(pmap([](const array& a) { return pmin(a, "i"); }, "i", {0}, {none})(x));
  CHECK(std::isnan(mx[1]));
  CHECK(std::isnan(mn[1]));
  CHECK(mx[0] == 1.0);
  CHECK(mn[3] == 1.0);
}

TEST_CASE("small reductions in one process stay inside the plan, a reduction of an unmapped value needs no stage",
          "[pmap][stages]") {
  {
    runtime rt(eight_cpus());
    auto f = pmap([](const array& a) { return psum(a, "i"); }, "i", {0}, {none});
    auto small = f(device_put(sample({8, 100}, 5), eight()));   // 800 B a device: one plan
    auto large = f(device_put(sample({8, 9000}, 5), eight()));  // 72 KB a device: a stage
    auto shares = [](const array& r) {
      auto shards = r.addressable_shards();
      return shards.size() == 8 && shards[1].data.get()->data() == shards[0].data.get()->data();
    };
    CHECK(!shares(small));
    CHECK(shares(large));
    CHECK(f.cache_size() == 2);
  }
  runtime rt(eight_cpus());
  auto x = device_put(sample({8, 5}, 3), eight());
  auto b = host_array::from_vector(std::vector<double>{1, 2, 3, 4, 5}, {5});
  auto f = pmap([](const array& a, const array& c) { return std::make_tuple(psum(c, "i"), pmean(c, "i"), a + psum(a, "i")); },
                "i", {0, none}, {none, none, 0});
  auto [s, m, t] = f(x, device_put(b, eight()[0]));
  CHECK(values(s) == std::vector<double>{8, 16, 24, 32, 40});
  // A captured array (not an argument) of 80 KB: unmapped, so a product by 8, no stage.
  auto big = device_put(host_array::full({10000}, 0.5, dtype::float64), eight()[0]);
  auto captured = pmap([big](const array& a) { return psum(big, "i") + psum(a, "i"); }, "i", {0}, {none});
  auto wide = device_put(host_array::full({8, 10000}, 1.0, dtype::float64), eight());
  auto got = values(captured(wide));
  CHECK(got.size() == 10000);
  CHECK(got.front() == 12.0);
  CHECK(got.back() == 12.0);
  CHECK(values(m) == std::vector<double>{1, 2, 3, 4, 5});
  CHECK(all_close(values(t), values(x + sum(x, {0})), 1e-12, 1e-12));
}

TEST_CASE("a data-parallel training step with stages equals the one-plan step bit for bit", "[pmap][stages]") {
  runtime rt(eight_cpus());
  auto loss = [](const array& w, const array& xb, const array& yb) { return mean(square(tanh(matmul(xb, w)) - yb)); };
  auto grads = grad(loss, {0});
  auto step = [grads](const array& w, const array& xb, const array& yb) {
    return w - pmean(grads(w, xb, yb), "d") * 0.1;
  };
  auto mapped = pmap(step, "d", {none, 0, 0}, {none});
  auto w0 = device_put(sample({96, 96}, 21), eight()[0]); // its gradient: 72 KB, a stage
  auto xs = device_put(sample({8, 5, 96}, 22), eight());
  auto ys = device_put(sample({8, 5, 96}, 23), eight());
  auto a = w0, b = w0;
  for (int k = 0; k < 5; ++k) {
    a = mapped(a, xs, ys);
    b = one_plan([&] { return mapped(b, xs, ys); });
  }
  CHECK(bits(a) == bits(b));
}

TEST_CASE("many threads calling one staged pmap each get their own reductions", "[pmap][stages][threads]") {
  runtime rt(eight_cpus());
  auto f = pmap([](const array& a) { return psum(a, "i") * 2.0; }, "i", {0}, {none});
  check_threads(f, 16.0, 15);
}

TEST_CASE("stages keep integer and half-precision reductions exact", "[pmap][stages]") {
  runtime rt(eight_cpus());
  auto ints = device_put(host_array::arange(0.0, 16.0, 1.0, dtype::int32).reshape({8, 2}), eight());
  auto s = pmap([](const array& a) { return psum(a, "i"); }, "i", {0}, {none})(ints);
  CHECK(s.dtype() == dtype::int32);
  CHECK(values(s) == std::vector<double>{56, 64});
  auto halves = device_put(host_array::full({8, 3}, 0.5, dtype::float16), eight());
  auto m = pmap([](const array& a) { return pmean(a, "i"); }, "i", {0}, {none})(halves);
  CHECK(m.dtype() == dtype::float16);
  CHECK(values(m) == std::vector<double>{0.5, 0.5, 0.5});
}

TEST_CASE("stopping the runtime while stages are in flight neither hangs nor crashes", "[pmap][stages][stop]") {
  check_stop_in_flight([](const array& a) { return pmean(psum(a, "i") * a, "i"); }, {none});
}

TEST_CASE("a pmapped function called with ever new shapes keeps at most staged_cache_bound staged programs",
          "[pmap][stages][cache]") {
  runtime rt(eight_cpus());
  auto two = std::vector<device>{eight()[0], eight()[1]};
  auto f = pmap([](const array& a) { return psum(a, "i"); }, "i", {0}, {none});
  auto signatures = detail::staged_cache_bound + 12;
  std::size_t most = 0;
  for (std::size_t k = 0; k < signatures; ++k) {
    auto n = static_cast<std::int64_t>(8200 + k); // float64: 64 KiB a device or more, each a stage
    auto r = f(device_put(host_array::full({2, n}, 1.5, dtype::float64), two));
    most = std::max(most, f.cache_size());
    if (k + 1 == signatures) {
      auto got = values(r);
      REQUIRE(got.size() == static_cast<std::size_t>(n));
      CHECK(got.front() == 3.0);
      CHECK(got.back() == 3.0);
    }
  }
  CHECK(most == detail::staged_cache_bound); // filled to the bound, never past it
  CHECK(f.cache_size() == signatures - detail::staged_cache_bound); // started again at the bound
  auto again = f(device_put(host_array::full({2, 8200}, 2.0, dtype::float64), two));
  CHECK(values(again).front() == 4.0);
}
