// jit, vmap and grad take host arrays and scalars as JAX takes numpy arrays and Python scalars:
// put on the default device (int32 / float32 / bool for scalars), mapped along in_axes by vmap,
// differentiated by grad; a signature of host data is cached like one of arrays; JAX's errors for
// a mapped scalar and an integer grad.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include "support/cpu_options.hpp"

#include <vector>

TEST_CASE("jit takes host arrays and scalars, put on the default device", "[unit][jit]") {
  am::runtime rt(am::test::cpu_options(2));
  auto f = am::jit([](const am::array& x, const am::array& s, const am::array& k) { return x * s + am::astype(k, x.dtype()); });
  auto xs = am::host_array::arange(4, am::dtype::float32);
  auto r = f(xs, 2.0, 1); // a double is float32, an int int32, as JAX with 64-bit types off
  CHECK(r.dtype() == am::dtype::float32);
  CHECK(r.to_host().to_vector<float>() == std::vector<float>{1, 3, 5, 7});
  CHECK(r.sharding()->device_set().size() == 1);
  CHECK(r.sharding()->device_set().front().id == am::local_devices().front().id);
  f(xs, 3.0, 2);
  CHECK(f.cache_size() == 1); // the same shapes and dtypes: one plan
  auto typed = am::jit([](const am::array& a, const am::array& b) { return std::vector<am::array>{a, b}; });
  auto both = typed(true, std::int64_t{5});
  CHECK(both[0].dtype() == am::dtype::bool_);
  CHECK(both[1].dtype() == am::dtype::int32);
}

TEST_CASE("vmap maps a host array and broadcasts a scalar", "[unit][vmap]") {
  am::runtime rt(am::test::cpu_options(2));
  auto scale = am::vmap([](const am::array& x, const am::array& w) { return x * w; }, {0, am::none});
  auto rows = am::host_array::arange(6, am::dtype::float32).reshape({3, 2});
  auto r = scale(rows, 2.0f);
  CHECK(r.shape() == am::shape_t{3, 2});
  CHECK(r.to_host().to_vector<float>() == std::vector<float>{0, 2, 4, 6, 8, 10});
  CHECK_THROWS_WITH(am::vmap([](const am::array& x) { return x; })(3.0f),
                    Catch::Contains("its rank should be at least 1, but is only 0"));
}

TEST_CASE("grad differentiates at host arrays and scalars, and refuses an integer as JAX", "[unit][grad]") {
  am::runtime rt(am::test::cpu_options(2));
  auto loss = [](const am::array& w, const am::array& x) { return am::sum(am::square(w * x)); };
  auto dw = am::grad(loss)(am::host_array::from_vector<float>({1, 2}), am::host_array::from_vector<float>({3, 4}));
  CHECK(dw.to_host().to_vector<float>() == std::vector<float>{18, 64}); // 2 w x^2
  auto [value, slope] = am::value_and_grad([](const am::array& x) { return am::sin(x); })(0.0);
  CHECK(value.to_host().item<float>() == 0.0f);
  CHECK(slope.to_host().item<float>() == 1.0f);
  CHECK(slope.dtype() == am::dtype::float32);
  CHECK_THROWS_WITH(am::grad([](const am::array& x) { return am::astype(x, am::dtype::float32); })(3),
                    Catch::StartsWith("grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                                      "np.inexact), but got int32."));
}
