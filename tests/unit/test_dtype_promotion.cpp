// Type promotion against the tables numpy 2.4.6 + ml_dtypes 0.6.0 and jax 0.10.2 (jax_enable_x64) print,
// pasted as data; the weak-scalar rule; dtype_of / element_t / visit_dtype; convert_element's casts.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "actormesh/actors/dtype_promotion.hpp"
#include "actormesh/actors/errors.hpp"

using am::dtype;

namespace {

constexpr std::array<dtype, 8> all = {dtype::bool_,   dtype::uint8,    dtype::int32,   dtype::int64,
                                      dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64};

using name_table = std::array<std::array<const char*, 8>, 8>;

// np.promote_types(row, column), as printed by numpy; "ERR" where numpy raises (DTypePromotionError).
constexpr name_table numpy_expected = {{
    {"bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"},  // bool
    {"uint8", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"},  // uint8
    {"int32", "int32", "int32", "int64", "float64", "ERR", "float64", "float64"},  // int32
    {"int64", "int64", "int64", "int64", "float64", "ERR", "float64", "float64"},  // int64
    {"float16", "float16", "float64", "float64", "float16", "ERR", "float32", "float64"},  // float16
    {"bfloat16", "bfloat16", "ERR", "ERR", "ERR", "bfloat16", "float32", "float64"},  // bfloat16
    {"float32", "float32", "float64", "float64", "float32", "float32", "float32", "float64"},  // float32
    {"float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64"},  // float64
}};

// jnp.promote_types(row, column) with jax_enable_x64.
constexpr name_table jax_expected = {{
    {"bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"},  // bool
    {"uint8", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"},  // uint8
    {"int32", "int32", "int32", "int64", "float16", "bfloat16", "float32", "float64"},  // int32
    {"int64", "int64", "int64", "int64", "float16", "bfloat16", "float32", "float64"},  // int64
    {"float16", "float16", "float16", "float16", "float16", "float32", "float32", "float64"},  // float16
    {"bfloat16", "bfloat16", "bfloat16", "bfloat16", "float32", "bfloat16", "float32", "float64"},  // bfloat16
    {"float32", "float32", "float32", "float32", "float32", "float32", "float32", "float64"},  // float32
    {"float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64"},  // float64
}};

} // namespace

TEST_CASE("promotion: promote_types matches numpy's table wherever numpy has an answer", "[promotion]") {
  int compared = 0;
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t j = 0; j < 8; ++j) {
      const std::string want = numpy_expected[i][j];
      if (want == "ERR") continue;
      INFO(am::name(all[i]) << " + " << am::name(all[j]));
      CHECK(std::string(am::name(am::promote_types(all[i], all[j]))) == want);
      ++compared;
    }
  CHECK(compared == 58);
}

TEST_CASE("promotion: promote_types completes numpy's refused bfloat16 pairs with the smallest float holding both",
          "[promotion]") {
  CHECK(am::promote_types(dtype::bfloat16, dtype::float16) == dtype::float32);
  CHECK(am::promote_types(dtype::float16, dtype::bfloat16) == dtype::float32);
  CHECK(am::promote_types(dtype::bfloat16, dtype::int32) == dtype::float64);
  CHECK(am::promote_types(dtype::int64, dtype::bfloat16) == dtype::float64);
}

TEST_CASE("promotion: promote_types with the jax rule matches jax.numpy's whole table", "[promotion]") {
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t j = 0; j < 8; ++j) {
      INFO(am::name(all[i]) << " + " << am::name(all[j]));
      CHECK(std::string(am::name(am::promote_types(all[i], all[j], am::promotion_rule::jax))) == jax_expected[i][j]);
    }
}

TEST_CASE("promotion: the brief's examples", "[promotion]") {
  CHECK(am::promote_types(dtype::int32, dtype::float32) == dtype::float64);
  CHECK(am::promote_types(dtype::bool_, dtype::uint8) == dtype::uint8);
  CHECK(am::promote_types(dtype::uint8, dtype::int32) == dtype::int32);
  CHECK(am::promote_types(dtype::int64, dtype::float16) == dtype::float64);
  CHECK(am::promote_types(dtype::int32, dtype::float32, am::promotion_rule::jax) == dtype::float32);
}

TEST_CASE("promotion: weak Python scalars follow NEP 50 (numpy 2 and jax agree)", "[promotion]") {
  using am::scalar_kind;
  // (array + True, array + 1, array + 1.5).dtype from numpy 2.4.6, except bfloat16 + 1.5 (see below).
  const std::array<std::array<dtype, 3>, 8> expected = {{
      {dtype::bool_, dtype::int64, dtype::float64},
      {dtype::uint8, dtype::uint8, dtype::float64},
      {dtype::int32, dtype::int32, dtype::float64},
      {dtype::int64, dtype::int64, dtype::float64},
      {dtype::float16, dtype::float16, dtype::float16},
      {dtype::bfloat16, dtype::bfloat16, dtype::bfloat16},  // jax: bfloat16; numpy+ml_dtypes: float32
      {dtype::float32, dtype::float32, dtype::float32},
      {dtype::float64, dtype::float64, dtype::float64},
  }};
  for (std::size_t i = 0; i < 8; ++i) {
    INFO(am::name(all[i]));
    CHECK(am::promote_with_scalar(all[i], scalar_kind::boolean) == expected[i][0]);
    CHECK(am::promote_with_scalar(all[i], scalar_kind::integer) == expected[i][1]);
    CHECK(am::promote_with_scalar(all[i], scalar_kind::floating) == expected[i][2]);
  }
}

TEST_CASE("promotion: an integer scalar must fit the integer array it meets", "[promotion]") {
  CHECK_THROWS_WITH(am::check_integer_scalar(dtype::uint8, 300), "Python integer 300 out of bounds for uint8");
  CHECK_THROWS_WITH(am::check_integer_scalar(dtype::uint8, -1), "Python integer -1 out of bounds for uint8");
  CHECK_THROWS_WITH(am::check_integer_scalar(dtype::int32, 1099511627776),
                    "Python integer 1099511627776 out of bounds for int32");
  CHECK_THROWS_AS(am::check_integer_scalar(dtype::int32, -2147483649LL), am::value_error);
  CHECK_NOTHROW(am::check_integer_scalar(dtype::uint8, 255));
  CHECK_NOTHROW(am::check_integer_scalar(dtype::int32, -2147483648LL));
  CHECK_NOTHROW(am::check_integer_scalar(dtype::float16, 1000000));
  CHECK_NOTHROW(am::check_integer_scalar(dtype::bool_, 7));
}

TEST_CASE("promotion: dtype_of, element_t and visit_dtype map C++ types and dtypes both ways", "[promotion]") {
  STATIC_REQUIRE(am::dtype_of<bool>() == dtype::bool_);
  STATIC_REQUIRE(am::dtype_of<std::uint8_t>() == dtype::uint8);
  STATIC_REQUIRE(am::dtype_of<std::int32_t>() == dtype::int32);
  STATIC_REQUIRE(am::dtype_of<std::int64_t>() == dtype::int64);
  STATIC_REQUIRE(am::dtype_of<long long>() == dtype::int64);
  STATIC_REQUIRE(am::dtype_of<const float>() == dtype::float32);
  STATIC_REQUIRE(am::dtype_of<double>() == dtype::float64);
  STATIC_REQUIRE(am::dtype_of<am::float16>() == dtype::float16);
  STATIC_REQUIRE(am::dtype_of<am::bfloat16>() == dtype::bfloat16);
  STATIC_REQUIRE_FALSE(am::element_type<std::int16_t>);
  STATIC_REQUIRE_FALSE(am::element_type<std::uint32_t>);
  STATIC_REQUIRE_FALSE(am::element_type<char>);
  STATIC_REQUIRE_FALSE(am::element_type<long double>);
  STATIC_REQUIRE(std::is_same_v<am::element_t<dtype::bfloat16>, am::bfloat16>);
  STATIC_REQUIRE(std::is_same_v<am::element_t<dtype::int32>, std::int32_t>);
  STATIC_REQUIRE(std::is_same_v<am::element_t<dtype::bool_>, bool>);
  for (const dtype t : all) {
    const auto [round_trip, size] = am::visit_dtype(t, []<class T>(std::type_identity<T>) {
      return std::pair{am::dtype_of<T>(), sizeof(T)};
    });
    CHECK(round_trip == t);
    CHECK(size == am::size_of(t));
  }
}

TEST_CASE("promotion: convert_element casts like numpy's astype on x86-64", "[promotion]") {
  using am::convert_element;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // np.array([nan, inf, -inf, 300.7, -1.7, -300.2, 1e20, 255.9, 256.0, 3e9]).astype(np.uint8)
  CHECK(convert_element<std::uint8_t>(nan) == 0);
  CHECK(convert_element<std::uint8_t>(inf) == 0);
  CHECK(convert_element<std::uint8_t>(-inf) == 0);
  CHECK(convert_element<std::uint8_t>(300.7) == 44);
  CHECK(convert_element<std::uint8_t>(-1.7) == 255);
  CHECK(convert_element<std::uint8_t>(-300.2) == 212);
  CHECK(convert_element<std::uint8_t>(1e20) == 0);
  CHECK(convert_element<std::uint8_t>(255.9) == 255);
  CHECK(convert_element<std::uint8_t>(256.0) == 0);
  CHECK(convert_element<std::uint8_t>(3e9) == 0);
  // .astype(np.int32) and .astype(np.int64)
  CHECK(convert_element<std::int32_t>(nan) == INT32_MIN);
  CHECK(convert_element<std::int32_t>(3e9) == INT32_MIN);
  CHECK(convert_element<std::int32_t>(-1.7) == -1);
  CHECK(convert_element<std::int32_t>(300.7f) == 300);
  CHECK(convert_element<std::int64_t>(1e19) == INT64_MIN);
  CHECK(convert_element<std::int64_t>(-inf) == INT64_MIN);
  CHECK(convert_element<std::int64_t>(-9.9) == -9);
  CHECK(convert_element<std::int32_t>(am::float16(1e6)) == INT32_MIN);  // float16 inf
  CHECK(convert_element<std::int32_t>(am::bfloat16(1e6f)) == 999424);
  CHECK(convert_element<std::uint8_t>(am::bfloat16(300.0f)) == 44);
  // integer wrap-around: np.array([300, -1, 2**31+5, -2**40-3]).astype(uint8 / int32)
  CHECK(convert_element<std::uint8_t>(std::int64_t{300}) == 44);
  CHECK(convert_element<std::uint8_t>(std::int64_t{-1}) == 255);
  CHECK(convert_element<std::uint8_t>(std::int64_t{2147483653}) == 5);
  CHECK(convert_element<std::uint8_t>(std::int64_t{-1099511627779}) == 253);
  CHECK(convert_element<std::int32_t>(std::int64_t{2147483653}) == -2147483643);
  // bool: nonzero (NaN included) is true
  CHECK(convert_element<bool>(nan));
  CHECK_FALSE(convert_element<bool>(-0.0));
  CHECK(convert_element<bool>(am::float16(0.1)));
  CHECK_FALSE(convert_element<bool>(am::bfloat16(0.0f)));
  CHECK(convert_element<bool>(std::uint8_t{2}));
  CHECK(convert_element<float>(true) == 1.0f);
  CHECK(convert_element<am::float16>(true).bits() == 0x3c00);
  // floats: rounded once, to nearest even
  CHECK(convert_element<float>(std::int64_t{16777217}) == 16777216.0f);
  CHECK(convert_element<am::float16>(65520.0).bits() == 0x7c00);
  CHECK(convert_element<am::bfloat16>(am::float16(0.1)).bits() == 0x3dcd);
  CHECK(convert_element<am::float16>(am::bfloat16(0.1f)).bits() == 0x2e68);
  CHECK(std::isinf(convert_element<float>(1e300)));
}
