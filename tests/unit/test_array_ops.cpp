// Operations on sharded arrays against host references: elementwise with promotion, broadcasting
// and resharding, reductions, reshape/transpose, matmul, random, jit against eager.
#include "support/arrays.hpp"

#include <catch2/catch.hpp>

#include <functional>

using namespace am;
using namespace am::testing;

namespace {

host_array iota_host(shape_t shape, dtype t, double scale = 1.0, double offset = 0.0) {
  auto n = element_count(shape);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = offset + scale * static_cast<double>(i);
  return host_array::from_vector(v, shape).astype(t);
}

std::vector<double> map_values(const std::vector<double>& v, const std::function<double(double)>& f) {
  std::vector<double> out;
  for (auto x : v)
    out.push_back(f(x));
  return out;
}

} // namespace

TEST_CASE("unary operations on a 2-D sharded array match the host", "[array][ops]") {
  runtime rt(eight_cpus());
  auto h = iota_host({8, 4}, dtype::float32, 0.25, 0.1);
  auto x = device_put(h, on_4x2(P("x", "y")));
  auto hv = values(h);
  CHECK(all_close(values(sin(x)), map_values(hv, [](double v) { return std::sin(v); }), 1e-5, 1e-6));
  CHECK(all_close(values(cos(x)), map_values(hv, [](double v) { return std::cos(v); }), 1e-5, 1e-6));
  CHECK(all_close(values(tanh(x)), map_values(hv, [](double v) { return std::tanh(v); }), 1e-5, 1e-6));
  CHECK(all_close(values(exp(x)), map_values(hv, [](double v) { return std::exp(v); }), 1e-5, 1e-6));
  CHECK(all_close(values(log(x)), map_values(hv, [](double v) { return std::log(v); }), 1e-5, 1e-6));
  CHECK(all_close(values(sqrt(x)), map_values(hv, [](double v) { return std::sqrt(v); }), 1e-5, 1e-6));
  CHECK(all_close(values(square(x)), map_values(hv, [](double v) { return v * v; }), 1e-5, 1e-6));
  CHECK(all_close(values(-x), map_values(hv, [](double v) { return -v; })));
  auto s = sin(x);
  CHECK(s.sharding() == x.sharding());
  CHECK(s.dtype() == dtype::float32);
}

TEST_CASE("integer inputs to float functions become float32 (int32) as in jax.numpy, float64 under numpy's rule", "[array][ops]") {
  runtime rt(eight_cpus());
  auto x = device_put(iota_host({8}, dtype::int32), make_named_sharding(mesh_4x2(), P("x")));
  auto s = sin(x);
  CHECK(s.dtype() == dtype::float32); // jnp.sin(int32) with x64 on
  CHECK(all_close(values(s), map_values(values(x), [](double v) { return std::sin(v); })));
  array_promotion_scope numpy_rule(promotion_rule::numpy);
  CHECK(sin(x).dtype() == dtype::float64);
}

TEST_CASE("binary operations promote, broadcast and reshard their operands", "[array][ops]") {
  runtime rt(eight_cpus());
  auto ha = iota_host({8, 4}, dtype::float32, 1.0, 1.0);
  auto hb = iota_host({8, 4}, dtype::int32, 2.0, -3.0);
  auto a = device_put(ha, on_4x2(P("x", "y")));
  auto b = device_put(hb, on_4x2(P(none, "y")));
  auto av = values(ha), bv = values(hb);
  std::vector<double> sum, prod, quot, mx;
  for (std::size_t i = 0; i < av.size(); ++i) {
    sum.push_back(av[i] + bv[i]);
    prod.push_back(av[i] * bv[i]);
    quot.push_back(av[i] / bv[i]);
    mx.push_back(std::max(av[i], bv[i]));
  }
  auto s = a + b;
  CHECK(s.dtype() == dtype::float32); // float32 + int32 -> float32 in jax.numpy (float64 in numpy)
  CHECK(s.sharding() == a.sharding());
  CHECK(all_close(values(s), sum));
  CHECK(all_close(values(a * b), prod));
  CHECK(all_close(values(a / b), quot));
  CHECK(all_close(values(maximum(a, b)), mx));
  // The other operand's sharding wins when the first is replicated.
  auto r = device_put(ha, on_4x2(P()));
  CHECK((r - b).sharding() == b.sharding());

  // Broadcasting a row vector held on one device over the sharded matrix.
  auto row = device_put(iota_host({4}, dtype::float32, 10.0), make_single_device_sharding(am::devices()[5]));
  auto br = a + row;
  REQUIRE(br.shape() == shape_t{8, 4});
  auto brv = values(br);
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      CHECK(brv[i * 4 + j] == Approx(av[i * 4 + j] + 10.0 * static_cast<double>(j)));
  CHECK_THROWS_WITH(a + device_put(iota_host({3}, dtype::float32), am::devices()[0]),
                    Catch::Contains("operands could not be broadcast together with shapes (8,4) (3,)"));
}

TEST_CASE("scalars are weakly typed and comparisons give bool", "[array][ops]") {
  runtime rt(eight_cpus());
  auto x = device_put(iota_host({8, 4}, dtype::int32), on_4x2(P("x")));
  auto plus = x + 1;
  CHECK(plus.dtype() == dtype::int32);
  auto half = x * 0.5;
  CHECK(half.dtype() == dtype::float64);
  auto f16 = astype(x, dtype::float16) * 2.0;
  CHECK(f16.dtype() == dtype::float16);
  auto xv = values(x);
  CHECK(all_close(values(plus), map_values(xv, [](double v) { return v + 1; })));
  CHECK(all_close(values(2 - x), map_values(xv, [](double v) { return 2 - v; })));
  auto big = x > 10;
  CHECK(big.dtype() == dtype::bool_);
  CHECK(values(big) == map_values(xv, [](double v) { return v > 10 ? 1.0 : 0.0; }));
  auto w = where(x > 10, x, -1);
  CHECK(w.dtype() == dtype::int32);
  CHECK(values(w) == map_values(xv, [](double v) { return v > 10 ? v : -1.0; }));
  CHECK_THROWS_WITH(astype(x, dtype::uint8) + 300, "Python integer 300 out of bounds for uint8");
}

TEST_CASE("arithmetic works in every dtype", "[array][ops][dtypes]") {
  runtime rt(eight_cpus());
  for (auto t : {dtype::uint8, dtype::int32, dtype::int64, dtype::float16, dtype::bfloat16, dtype::float32,
                 dtype::float64}) {
    INFO(name(t));
    auto h = iota_host({8, 2}, t);
    auto x = device_put(h, on_4x2(P("x", "y")));
    auto y = x * x + x;
    CHECK(y.dtype() == t);
    CHECK(values(y) == map_values(values(h), [](double v) { return v * v + v; }));
    CHECK(values(maximum(x, 7)) == map_values(values(h), [](double v) { return std::max(v, 7.0); }));
  }
  auto b = device_put(iota_host({8}, dtype::bool_), make_named_sharding(mesh_4x2(), P("x")));
  CHECK(values(astype(b, dtype::int32)) == std::vector<double>{0, 1, 1, 1, 1, 1, 1, 1});
}

TEST_CASE("reductions combine partial results across devices", "[array][reductions]") {
  runtime rt(eight_cpus());
  auto h = iota_host({8, 4}, dtype::float32, 1.0, -5.0);
  auto hv = values(h);
  for (auto spec : {P("x", "y"), P("y", "x"), P(std::vector<std::string>{"x", "y"}), P(), P(none, "x")}) {
    INFO(spec.to_string());
    auto x = device_put(h, on_4x2(spec));
    double total = 0;
    for (auto v : hv)
      total += v;
    CHECK(values(sum(x)) == std::vector<double>{total});
    CHECK(sum(x).shape().empty());
    std::vector<double> rows(8, 0), cols(4, 0), col_max(4, -1e9);
    for (std::size_t i = 0; i < 8; ++i)
      for (std::size_t j = 0; j < 4; ++j) {
        rows[i] += hv[i * 4 + j];
        cols[j] += hv[i * 4 + j];
        col_max[j] = std::max(col_max[j], hv[i * 4 + j]);
      }
    CHECK(values(sum(x, {1})) == rows);
    CHECK(values(sum(x, {0})) == cols);
    CHECK(values(max(x, {-2})) == col_max);
    CHECK(values(min(x)) == std::vector<double>{-5});
    CHECK(values(mean(x)) == std::vector<double>{total / 32});
  }
  auto i = device_put(iota_host({8}, dtype::int32), make_named_sharding(mesh_4x2(), P("x")));
  CHECK(sum(i).dtype() == dtype::int64);
  CHECK(mean(i).dtype() == dtype::float32); // jnp.mean(int32) with x64 on
  CHECK_THROWS_WITH(sum(i, {1}), "axis 1 is out of bounds for array of dimension 1");
}

TEST_CASE("reshape, transpose and matmul of sharded arrays", "[array][shape]") {
  runtime rt(eight_cpus());
  auto h = iota_host({8, 4}, dtype::float32);
  auto x = device_put(h, on_4x2(P("x", "y")));
  auto t = transpose(x);
  REQUIRE(t.shape() == shape_t{4, 8});
  CHECK(values(t) == values(h.transpose()));
  CHECK(t.sharding()->to_string() == on_4x2(P("y", "x"))->to_string());
  auto r1 = reshape(device_put(h, on_4x2(P("x"))), {8, 2, 2});
  CHECK(values(r1) == values(h));
  CHECK(r1.sharding()->to_string() == on_4x2(P("x"))->to_string());
  auto r2 = reshape(x, {-1});
  CHECK(r2.shape() == shape_t{32});
  CHECK(values(r2) == values(h));
  CHECK_THROWS_WITH(reshape(x, {5}), "cannot reshape array of size 32 into shape (5,)");

  auto hy = iota_host({4, 3}, dtype::float32, 0.5);
  auto rows_sharded = device_put(h, on_4x2(P("x")));
  auto y = device_put(hy, on_4x2(P()));
  auto m = matmul(rows_sharded, y);
  REQUIRE(m.shape() == shape_t{8, 3});
  auto xv = values(h), yv = values(hy);
  std::vector<double> expected(24, 0);
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t k = 0; k < 4; ++k)
        expected[i * 3 + j] += xv[i * 4 + k] * yv[k * 3 + j];
  CHECK(all_close(values(m), expected));
  CHECK(m.sharding()->to_string() == on_4x2(P("x"))->to_string());
  CHECK(all_close(values(matmul(x, device_put(hy, on_4x2(P("y"))))), expected));
  CHECK_THROWS_WITH(matmul(x, x), "dot_general requires contracting dimensions to have the same shape, got (4,) and (8,).");
}

TEST_CASE("random values do not depend on the sharding", "[array][random]") {
  runtime rt(eight_cpus());
  auto key = random_key(42);
  auto keys = split(key);
  REQUIRE(keys.size() == 2);
  CHECK_FALSE(keys[0] == keys[1]);
  auto a = normal(keys[0], {8, 6}, on_4x2(P("x", "y")));
  auto b = normal(keys[0], {8, 6}, make_single_device_sharding(am::devices()[3]));
  auto c = normal(keys[1], {8, 6}, on_4x2(P("x", "y")));
  CHECK(values(a) == values(b));
  CHECK(values(a) != values(c));
  auto u = uniform(key, {8, 6}, on_4x2(P(none, "y")), dtype::float32, -2.0, 3.0);
  for (auto v : values(u)) {
    CHECK(v >= -2.0);
    CHECK(v < 3.0);
  }
}

TEST_CASE("jit agrees with eager and traces once per signature", "[array][jit]") {
  runtime rt(eight_cpus());
  auto complex_computation = [](const array& x) { // seeds/004
    auto y = sin(x) * cos(x);
    auto z = tanh(y) + sqrt(abs(x));
    return z * 2.0;
  };
  auto h = iota_host({8, 8}, dtype::float32, 0.1, -3.0);
  auto x = device_put(h, on_4x2(P("x", "y")));
  auto f = jit(complex_computation);
  auto eager = complex_computation(x);
  auto jitted_result = f(x);
  CHECK(all_close(values(jitted_result), values(eager), 1e-5, 1e-6));
  f(x);
  CHECK(f.cache_size() == 1);
  // One program per device, in one stage: one message per shard.
  CHECK_THAT(f.lowered_text(x), Catch::StartsWith("8 programs in 1 stage(s)"));
  auto y = device_put(h, on_4x2(P("x")));
  f(y);
  CHECK(f.cache_size() == 2);

  auto g = jit([](const array& a, const array& b) { return std::make_tuple(a + b, sum(a * b)); });
  auto [s, t] = g(x, y);
  CHECK(all_close(values(s), values(x + y)));
  CHECK(all_close(values(t), values(sum(x * y))));
}

TEST_CASE("deleted arrays and stray tracers give clear errors", "[array]") {
  runtime rt(eight_cpus());
  auto x = device_put(iota_host({8, 4}, dtype::float32), on_4x2(P("x", "y")));
  x.block_until_ready(std::chrono::seconds(10));
  auto y = x;
  x.delete_();
  CHECK(y.is_deleted());
  CHECK_THROWS_WITH(sin(y), "Array has been deleted with shape=float32[8,4].");
  CHECK_THROWS_WITH(y.to_host(), "Array has been deleted with shape=float32[8,4].");
  array leaked;
  auto f = jit([&leaked](const array& a) {
    leaked = a * 2;
    return a;
  });
  auto z = device_put(iota_host({8}, dtype::float32), on_4x2(P("x")));
  f(z);
  CHECK_THROWS_WITH(sin(leaked), Catch::Contains("unexpected tracer"));
}
