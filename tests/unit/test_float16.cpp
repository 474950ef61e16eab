// am::float16 and am::bfloat16: rounding, special values and arithmetic, checked against bit patterns
// taken from numpy 2.4 (float16) and ml_dtypes 0.6 (bfloat16), plus exhaustive sweeps over all values.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include "actormesh/actors/float16.hpp"

using am::bfloat16;
using am::float16;

namespace {

// The next representable double above / below (std::nextafter, named for the reader).
double up(double x) { return std::nextafter(x, INFINITY); }
double down(double x) { return std::nextafter(x, -INFINITY); }

} // namespace

TEST_CASE("float16: 16-bit floats are two-byte plain data and convert at compile time", "[float16]") {
  STATIC_REQUIRE(sizeof(float16) == 2);
  STATIC_REQUIRE(sizeof(bfloat16) == 2);
  STATIC_REQUIRE(std::is_trivially_copyable_v<float16>);
  STATIC_REQUIRE(std::is_trivially_copyable_v<bfloat16>);
  STATIC_REQUIRE(float16(1.0).bits() == 0x3c00);
  STATIC_REQUIRE(bfloat16(1.0f).bits() == 0x3f80);
  STATIC_REQUIRE(static_cast<float>(float16::from_bits(0x3555)) == 0.333251953125f);
  STATIC_REQUIRE(float16().bits() == 0 && bfloat16().bits() == 0);
}

TEST_CASE("float16: float16 rounds like numpy", "[float16]") {
  CHECK(float16(0.1).bits() == 0x2e66);
  CHECK(float16(-2.5).bits() == 0xc100);
  CHECK(float16(65504.0).bits() == 0x7bff);     // largest finite
  CHECK(float16(65519.99).bits() == 0x7bff);    // below the overflow threshold
  CHECK(float16(65520.0).bits() == 0x7c00);     // the tie goes to "even" = infinity
  CHECK(float16(1e6).bits() == 0x7c00);
  CHECK(float16(-1e6).bits() == 0xfc00);
  CHECK(float16(std::ldexp(1.0, -24)).bits() == 0x0001);         // smallest subnormal
  CHECK(float16(std::ldexp(1.0, -25)).bits() == 0x0000);         // tie to even: zero
  CHECK(float16(std::ldexp(1.0001, -25)).bits() == 0x0001);
  CHECK(float16(std::ldexp(1.5, -24)).bits() == 0x0002);         // tie to even: 2
  CHECK(float16(1e-7).bits() == 0x0002);
  CHECK(float16(6e-8).bits() == 0x0001);
  CHECK(float16(std::ldexp(1.0, -14)).bits() == 0x0400);         // smallest normal
  CHECK(float16(std::ldexp(1023.5, -24)).bits() == 0x0400);      // subnormal rounding up into normal
  CHECK(float16(-0.0).bits() == 0x8000);
  CHECK(float16(INFINITY).bits() == 0x7c00);
  CHECK(float16(-INFINITY).bits() == 0xfc00);
  // A double is rounded once, directly (numpy): 1 + 2^-11 + 2^-40 is just above a midpoint.
  CHECK(float16(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)).bits() == 0x3c01);
  // Integers go through double.
  CHECK(float16(2049).bits() == 0x6800);   // 2049 is a tie between 2048 and 2050: even 2048
  CHECK(float16(std::int64_t{70000}).bits() == 0x7c00);
}

TEST_CASE("float16: float16 NaN keeps its sign and payload as numpy does", "[float16]") {
  CHECK(float16(std::numeric_limits<double>::quiet_NaN()).bits() == 0x7e00);
  CHECK(float16(-std::numeric_limits<double>::quiet_NaN()).bits() == 0xfe00);
  CHECK(float16(std::numeric_limits<float>::quiet_NaN()).bits() == 0x7e00);
  // A float NaN whose payload sits only in the low bits still stays NaN (not infinity).
  CHECK(float16(std::bit_cast<float>(0x7f800001u)).bits() == 0x7c01);
  CHECK(isnan(float16(NAN)));
  CHECK_FALSE(isnan(float16(INFINITY)));
  CHECK(isinf(float16(-INFINITY)));
  CHECK(isfinite(float16(65504.0)));
  CHECK_FALSE(isfinite(float16(NAN)));
}

TEST_CASE("float16: every float16 value survives float and double exactly", "[float16]") {
  for (std::uint32_t b = 0; b <= 0xffff; ++b) {
    const float16 h = float16::from_bits(static_cast<std::uint16_t>(b));
    if (isnan(h)) {
      CHECK(std::isnan(static_cast<float>(h)));
      continue;
    }
    REQUIRE(float16(static_cast<float>(h)).bits() == b);
    REQUIRE(float16(static_cast<double>(h)).bits() == b);
  }
}

TEST_CASE("float16: float16 rounds every midpoint to even and its neighbours to the nearer value", "[float16]") {
  for (std::uint16_t b = 0; b < 0x7bff; ++b) {
    const double lo = static_cast<double>(float16::from_bits(b));
    const double hi = static_cast<double>(float16::from_bits(static_cast<std::uint16_t>(b + 1)));
    const double mid = (lo + hi) / 2;  // exact in double and in float
    const std::uint16_t even = (b & 1) ? static_cast<std::uint16_t>(b + 1) : b;
    REQUIRE(float16(mid).bits() == even);
    REQUIRE(float16(static_cast<float>(mid)).bits() == even);
    REQUIRE(float16(up(mid)).bits() == b + 1);
    REQUIRE(float16(down(mid)).bits() == b);
    REQUIRE(float16(std::nextafter(static_cast<float>(mid), INFINITY)).bits() == b + 1);
    REQUIRE(float16(-mid).bits() == (even | 0x8000));
  }
}

TEST_CASE("float16: bfloat16 rounds like ml_dtypes", "[float16]") {
  CHECK(bfloat16(0.1f).bits() == 0x3dcd);
  CHECK(static_cast<float>(bfloat16(0.1)) == 0.10009765625f);
  CHECK(bfloat16(3.14159).bits() == 0x4049);
  CHECK(bfloat16(1e-40f).bits() == 0x0001);  // float subnormal -> bfloat16 subnormal
  CHECK(bfloat16(3.4e38f).bits() == 0x7f80); // above max + half ulp: infinity
  CHECK(bfloat16(3.38953139e38f).bits() == 0x7f7f);
  CHECK(bfloat16(-0.0f).bits() == 0x8000);
  CHECK(bfloat16(std::numeric_limits<float>::quiet_NaN()).bits() == 0x7fc0);
  CHECK(bfloat16(-std::numeric_limits<float>::quiet_NaN()).bits() == 0xffc0);
  CHECK(bfloat16(std::bit_cast<float>(0x7f800001u)).bits() == 0x7fc0);  // never truncated to inf
  // ml_dtypes converts a double through float: 1 + 2^-8 + 2^-30 becomes the midpoint 1 + 2^-8, then 1.
  CHECK(bfloat16(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)).bits() == 0x3f80);
  CHECK(isnan(bfloat16(NAN)));
  CHECK(isinf(bfloat16(INFINITY)));
}

TEST_CASE("float16: bfloat16 round-trips every value and rounds every midpoint to even", "[float16]") {
  for (std::uint32_t b = 0; b <= 0xffff; ++b) {
    const bfloat16 x = bfloat16::from_bits(static_cast<std::uint16_t>(b));
    if (isnan(x)) continue;
    REQUIRE(bfloat16(static_cast<float>(x)).bits() == b);
  }
  for (std::uint16_t b = 0; b < 0x7f7f; ++b) {
    const float lo = static_cast<float>(bfloat16::from_bits(b));
    const float hi = static_cast<float>(bfloat16::from_bits(static_cast<std::uint16_t>(b + 1)));
    const auto mid = static_cast<float>((double{lo} + hi) / 2);  // exact in float (the sum may not fit)
    const std::uint16_t even = (b & 1) ? static_cast<std::uint16_t>(b + 1) : b;
    REQUIRE(bfloat16(mid).bits() == even);
    REQUIRE(bfloat16(std::nextafter(mid, INFINITY)).bits() == b + 1);
    REQUIRE(bfloat16(std::nextafter(mid, -INFINITY)).bits() == b);
  }
}

TEST_CASE("float16: arithmetic is float arithmetic rounded back (numpy, ml_dtypes results)", "[float16]") {
  CHECK((float16(0.1) + float16(0.2)).bits() == 0x34cc);
  CHECK((float16(3.3) * float16(7.1)).bits() == 0x4ddc);
  CHECK((float16(1.0) / float16(3.0)).bits() == 0x3555);
  CHECK((float16(1000.0) - float16(0.3)).bits() == 0x63cf);
  CHECK((float16(60000.0) + float16(60000.0)).bits() == 0x7c00);
  CHECK((bfloat16(0.1) + bfloat16(0.2)).bits() == 0x3e9a);
  CHECK((bfloat16(3.3) * bfloat16(7.1)).bits() == 0x41bb);
  CHECK((bfloat16(1.0) / bfloat16(3.0)).bits() == 0x3eab);
  CHECK((bfloat16(1000.0) - bfloat16(0.3)).bits() == 0x447a);
  float16 x(2.0);
  x += float16(1.0);
  x *= float16(4.0);
  x -= float16(2.0);
  x /= float16(5.0);
  CHECK(static_cast<float>(x) == 2.0f);
  CHECK((-float16(1.5)).bits() == 0xbe00);
  CHECK((-float16(0.0)).bits() == 0x8000);
  CHECK((+bfloat16(1.5)).bits() == bfloat16(1.5).bits());
}

TEST_CASE("float16: 16-bit comparisons follow IEEE", "[float16]") {
  CHECK(float16(1.0) < float16(2.0));
  CHECK(float16(-0.0) == float16(0.0));
  CHECK(float16(NAN) != float16(NAN));
  CHECK_FALSE(float16(NAN) < float16(1.0));
  CHECK_FALSE(float16(NAN) >= float16(1.0));
  CHECK(bfloat16(3.0) >= bfloat16(3.0));
  CHECK(bfloat16(-INFINITY) < bfloat16(-1e30f));
}

TEST_CASE("float16: numeric_limits agree with numpy's finfo", "[float16]") {
  using l16 = std::numeric_limits<float16>;
  using lbf = std::numeric_limits<bfloat16>;
  CHECK(static_cast<float>(l16::max()) == 65504.0f);
  CHECK(static_cast<float>(l16::lowest()) == -65504.0f);
  CHECK(static_cast<float>(l16::min()) == std::ldexp(1.0f, -14));
  CHECK(static_cast<float>(l16::epsilon()) == std::ldexp(1.0f, -10));
  CHECK(static_cast<float>(l16::denorm_min()) == std::ldexp(1.0f, -24));
  CHECK(std::isinf(static_cast<float>(l16::infinity())));
  CHECK(isnan(l16::quiet_NaN()));
  CHECK(isnan(l16::signaling_NaN()));
  CHECK(static_cast<float>(lbf::max()) == 3.38953139e38f);
  CHECK(static_cast<float>(lbf::min()) == std::numeric_limits<float>::min());
  CHECK(static_cast<float>(lbf::epsilon()) == 0.0078125f);
  CHECK(static_cast<float>(lbf::denorm_min()) == std::ldexp(1.0f, -133));
  CHECK(isnan(lbf::quiet_NaN()));
  CHECK(l16::digits == 11);
  CHECK(lbf::digits == 8);
}
