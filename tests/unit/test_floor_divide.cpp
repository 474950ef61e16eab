// am::floor_divide (x // y) against the table jnp.floor_divide wrote (tests/data/jax_floor_divide_table.txt,
// from tools/gen_jax_floor_divide_table.py): result dtypes for every pair of dtypes and with Python
// scalars, and values for integers (negative and zero divisors, the extremes) and floats (inf, nan,
// -0.0, zero divisors, rounding quotients), on one CPU device, sharded over 8, fused under jit, and
// its gradient (zero, as in JAX).
#include "support/arrays.hpp"
#include "support/data_table.hpp"

#include "actormesh/parallel/parallel.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

using namespace am;
using namespace am::testing;

namespace {

const std::vector<table_record>& records() {
  static const auto r = read_data_table("jax_floor_divide_table.txt");
  return r;
}

/// One dtype's value records: x, y and JAX's x // y, as int64 (integers) or double (floats).
struct cases {
  std::vector<std::int64_t> ix, iy, iwant;
  std::vector<double> fx, fy, fwant;
};

double parse_float(const std::string& s) { return std::strtod(s.c_str(), nullptr); } // hex, inf, nan

std::map<std::string, cases> value_cases() {
  std::map<std::string, cases> out;
  for (const auto& r : records()) {
    if (r[0] != "value")
      continue;
    auto& c = out[r[1]];
    if (is_floating(dtype_named(r[1]))) {
      c.fx.push_back(parse_float(r[2]));
      c.fy.push_back(parse_float(r[3]));
      c.fwant.push_back(parse_float(r[4]));
    } else {
      c.ix.push_back(std::stoll(r[2]));
      c.iy.push_back(std::stoll(r[3]));
      c.iwant.push_back(std::stoll(r[4]));
    }
  }
  return out;
}

host_array host_of(const cases& c, bool x, dtype t) {
  if (is_floating(t))
    return host_array::from_vector(x ? c.fx : c.fy).astype(t);
  return host_array::from_vector(x ? c.ix : c.iy).astype(t);
}

/// Checks `got` (any layout) element by element against the table's results; NaN matches NaN and
/// zeros must match in sign.
void check_against(const array& got, const cases& c, dtype t, const std::string& what) {
  REQUIRE(got.dtype() == t);
  if (is_floating(t)) {
    auto v = got.to_host().astype(dtype::float64).to_vector<double>();
    REQUIRE(v.size() == c.fwant.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      INFO(what << ": " << c.fx[i] << " // " << c.fy[i] << " gave " << v[i] << ", JAX " << c.fwant[i]);
      if (std::isnan(c.fwant[i]))
        CHECK(std::isnan(v[i]));
      else
        CHECK((v[i] == c.fwant[i] && std::signbit(v[i]) == std::signbit(c.fwant[i])));
    }
  } else {
    auto v = got.to_host().astype(dtype::int64).to_vector<std::int64_t>();
    REQUIRE(v.size() == c.iwant.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      INFO(what << ": " << c.ix[i] << " // " << c.iy[i] << " gave " << v[i] << ", JAX " << c.iwant[i]);
      CHECK(v[i] == c.iwant[i]);
    }
  }
}

/// The first multiple-of-8 prefix of a dtype's cases (to shard them over 8 devices).
cases prefix8(const cases& c) {
  cases p = c;
  auto n = (std::max(c.fx.size(), c.ix.size()) / 8) * 8;
  for (auto* v : {&p.ix, &p.iy, &p.iwant})
    if (!v->empty())
      v->resize(n);
  for (auto* v : {&p.fx, &p.fy, &p.fwant})
    if (!v->empty())
      v->resize(n);
  return p;
}

} // namespace

TEST_CASE("floor_divide gives jax.numpy's result dtypes", "[array][floor_divide][jax]") {
  runtime rt(eight_cpus());
  int checked = 0;
  for (const auto& r : records()) {
    if (r[0] == "dtype") {
      INFO(r[1] << " // " << r[2]);
      auto a = floor_divide(ones_of(dtype_named(r[1])), ones_of(dtype_named(r[2])));
      CHECK(std::string(name(a.dtype())) == r[3]);
      CHECK(a.to_host().dtype() == a.dtype());
      ++checked;
    } else if (r[0] == "scalar") {
      INFO(r[1] << " // Python " << r[2]);
      CHECK(std::string(name(floor_divide(ones_of(dtype_named(r[1])), python_scalar(r[2])).dtype())) == r[3]);
      ++checked;
    }
  }
  CHECK(checked == 64 + 24);
}

TEST_CASE("floor_divide gives jax.numpy's values on one CPU device", "[array][floor_divide][jax]") {
  runtime rt(eight_cpus());
  auto one = make_single_device_sharding(am::devices()[0]);
  auto all = value_cases();
  REQUIRE(all.size() == 7); // uint8, int32, int64 and the four float dtypes
  for (auto& [type_name, c] : all) {
    auto t = dtype_named(type_name);
    auto x = device_put(host_of(c, true, t), one);
    auto y = device_put(host_of(c, false, t), one);
    check_against(floor_divide(x, y), c, t, type_name + " eager");
  }
}

TEST_CASE("floor_divide on 8 devices and fused under jit gives the same values", "[array][floor_divide][jit]") {
  runtime rt(eight_cpus());
  auto sharded = make_named_sharding(mesh(create_device_mesh({8}, am::devices(platform::cpu)), {"x"}), P("x"));
  auto f = jit([](const array& a, const array& b) { return floor_divide(a * 1 + 0, b); }, "floor_divide_fused");
  for (auto& [type_name, full] : value_cases()) {
    auto c = prefix8(full);
    auto t = dtype_named(type_name);
    auto x = device_put(host_of(c, true, t), sharded);
    auto y = device_put(host_of(c, false, t), sharded);
    check_against(floor_divide(x, y), c, t, type_name + " sharded");
    check_against(f(x, y), c, t, type_name + " jit");
  }
}

TEST_CASE("floor_divide broadcasts and takes scalars on either side", "[array][floor_divide]") {
  runtime rt(eight_cpus());
  auto one = make_single_device_sharding(am::devices()[0]);
  auto x = device_put(host_array::from_vector(std::vector<std::int64_t>{-7, 7, 0}, {3, 1}).astype(dtype::int32), one);
  auto y = device_put(host_array::from_vector(std::vector<std::int64_t>{2, -2, 3, 0}, {4}).astype(dtype::int32), one);
  auto r = floor_divide(x, y);
  REQUIRE(r.shape() == shape_t{3, 4});
  CHECK(r.to_host().astype(dtype::int64).to_vector<std::int64_t>()
        == std::vector<std::int64_t>{-4, 3, -3, -2, 3, -4, 2, -2, 0, 0, 0, -1});
  CHECK(values(floor_divide(x, 2)) == std::vector<double>{-4, 3, 0});
  CHECK(values(floor_divide(10, y)) == std::vector<double>{5, -5, 3, -2});
  auto f = floor_divide(x, 2.5); // a float scalar makes an int32 array float64, as in JAX
  CHECK(f.dtype() == dtype::float64);
  CHECK(values(f) == std::vector<double>{-3, 2, 0});
}

TEST_CASE("the gradient of floor_divide is zero, as in JAX", "[grad][floor_divide]") {
  runtime rt(eight_cpus());
  auto x = device_put(host_array::from_vector(std::vector<double>{-3.5, -1.0, 0.25, 2.0, 7.5, 9.0, 11.0, 12.5}),
                      on_4x2(P("x")));
  auto g = grad([](const array& a) { return sum(floor_divide(a, 2.0)); })(x);
  CHECK(values(g) == std::vector<double>(8, 0.0));
  // d/da (a // 2) * a = a // 2: only the product's own rule contributes.
  auto h = grad([](const array& a) { return sum(floor_divide(a, 2.0) * a); })(x);
  CHECK(values(h) == std::vector<double>{-2, -1, 0, 1, 3, 4, 5, 6});
  auto k = grad([](const array& a) { return sum(floor_divide(7.0, a)); })(x);
  CHECK(values(k) == std::vector<double>(8, 0.0));
}

TEST_CASE("floor_divide under vmap gives each row's values", "[vmap][floor_divide]") {
  runtime rt(eight_cpus());
  std::vector<std::int64_t> xs{-7, -1, 0, 5, 7, 8, -8, 3};
  auto x = device_put(host_array::from_vector(xs, {4, 2}).astype(dtype::int32), on_4x2(P("x")));
  auto r = vmap([](const array& row) { return floor_divide(row, -3); })(x);
  REQUIRE(r.shape() == shape_t{4, 2});
  CHECK(values(r) == std::vector<double>{2, 0, 0, -2, -3, -3, 2, -1});
}
