/// The 16-bit floating-point element types: IEEE half (`float16`) and brain float (`bfloat16`).
///
/// Both are plain data (two bytes, trivially copyable) so buffers of them can be moved as raw bytes and
/// used by device kernels later. Conversions round to nearest, ties to even, and handle NaN, infinity and
/// subnormals the way numpy (float16) and ml_dtypes (bfloat16) do. Arithmetic is done in float and
/// rounded back; for + - * / that is exactly the correctly rounded 16-bit result, because float has more
/// than twice the precision of either type plus two bits.
#ifndef ACTORMESH_ACTORS_FLOAT16_HPP
#define ACTORMESH_ACTORS_FLOAT16_HPP

#include <bit>
#include <compare>
#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>

namespace am {

namespace detail {

/// Rounds a double to a narrower binary float with `exp_bits` exponent and `man_bits` stored mantissa
/// bits (round to nearest, ties to even), returning the bit pattern. NaN stays NaN (sign and top payload
/// bits kept, as numpy's npy_doublebits_to_halfbits), overflow goes to infinity, tiny values become
/// subnormals or zero.
template <int exp_bits, int man_bits>
constexpr std::uint16_t narrow_float_bits(double value) noexcept {
  const auto x = std::bit_cast<std::uint64_t>(value);
  const auto sign = static_cast<std::uint16_t>((x >> 63) << (exp_bits + man_bits));
  const auto exp_field = static_cast<int>((x >> 52) & 0x7ff);
  const std::uint64_t mant = x & ((std::uint64_t{1} << 52) - 1);
  constexpr std::uint16_t exp_all_ones = ((1u << exp_bits) - 1) << man_bits;
  constexpr int bias = (1 << (exp_bits - 1)) - 1;
  constexpr int min_normal_exp = 1 - bias;
  if (exp_field == 0x7ff) {
    if (mant == 0) return sign | exp_all_ones;
    // NaN: keep the top payload bits as numpy does, but never let them all be zero (that is inf).
    const auto payload = static_cast<std::uint16_t>(mant >> (52 - man_bits));
    return static_cast<std::uint16_t>(sign | exp_all_ones | (payload == 0 ? 1 : payload));
  }
  if (exp_field == 0) return sign;  // zero or a double subnormal: far below any 16-bit subnormal
  const int e = exp_field - 1023;
  const std::uint64_t m = mant | (std::uint64_t{1} << 52);  // value = m * 2^(e - 52)
  if (e > bias) return sign | exp_all_ones;                  // above the largest finite: infinity
  std::uint64_t result;
  int shift;
  if (e >= min_normal_exp) {
    shift = 52 - man_bits;
    result = (static_cast<std::uint64_t>(e + bias) << man_bits) | ((m >> shift) & ((1u << man_bits) - 1));
  } else {
    shift = 52 - man_bits + (min_normal_exp - e);  // in units of the smallest subnormal
    if (shift > 63) return sign;
    result = m >> shift;
  }
  const std::uint64_t rest = m & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  if (rest > half || (rest == half && (result & 1))) ++result;  // a carry may give the next binade or inf
  return static_cast<std::uint16_t>(sign | result);
}

/// Widens the bit pattern of a narrower binary float to float, exactly.
template <int exp_bits, int man_bits>
constexpr float widen_float_bits(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> (exp_bits + man_bits)) << 31;
  const int exp_field = (bits >> man_bits) & ((1 << exp_bits) - 1);
  std::uint32_t mant = bits & ((1u << man_bits) - 1);
  constexpr int bias = (1 << (exp_bits - 1)) - 1;
  if (exp_field == (1 << exp_bits) - 1)  // inf or NaN: keep the payload
    return std::bit_cast<float>(sign | 0x7f800000u | (mant << (23 - man_bits)));
  if (exp_field == 0) {
    if (mant == 0) return std::bit_cast<float>(sign);
    int e = 1 - bias;  // normalize the subnormal
    while ((mant & (1u << man_bits)) == 0) {
      mant <<= 1;
      --e;
    }
    mant &= (1u << man_bits) - 1;
    return std::bit_cast<float>(sign | (static_cast<std::uint32_t>(e + 127) << 23) | (mant << (23 - man_bits)));
  }
  return std::bit_cast<float>(sign | (static_cast<std::uint32_t>(exp_field - bias + 127) << 23) |
                              (mant << (23 - man_bits)));
}

/// Rounds a float to half bits like numpy's npy_floatbits_to_halfbits: from the float's own bits, so a
/// signaling NaN keeps its payload (widening to double first would make it quiet).
constexpr std::uint16_t float_to_half_bits(float value) noexcept {
  const auto x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    const auto payload = static_cast<std::uint16_t>((x & 0x7fffffu) >> 13);
    return static_cast<std::uint16_t>(((x >> 16) & 0x8000u) | 0x7c00u | (payload == 0 ? 1 : payload));
  }
  return narrow_float_bits<5, 10>(static_cast<double>(value));
}

/// Rounds a float to bfloat16 bits (round to nearest even; NaN becomes the quiet NaN 0x7fc0 with the
/// sign kept), as ml_dtypes does.
constexpr std::uint16_t float_to_bfloat16_bits(float value) noexcept {
  const auto x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>(((x >> 16) & 0x8000u) | 0x7fc0u);
  const std::uint32_t lsb = (x >> 16) & 1u;
  return static_cast<std::uint16_t>((x + 0x7fffu + lsb) >> 16);
}

/// Shared operators of the 16-bit float types, written once (CRTP): arithmetic through float, rounded
/// back to `derived`, and comparisons through float (so NaN compares unordered and -0 == +0).
template <class derived>
struct float16_operators {
  /// Sum, rounded to the 16-bit type.
  friend constexpr derived operator+(derived a, derived b) noexcept { return derived(float(a) + float(b)); }
  /// Difference, rounded to the 16-bit type.
  friend constexpr derived operator-(derived a, derived b) noexcept { return derived(float(a) - float(b)); }
  /// Product, rounded to the 16-bit type.
  friend constexpr derived operator*(derived a, derived b) noexcept { return derived(float(a) * float(b)); }
  /// Quotient, rounded to the 16-bit type.
  friend constexpr derived operator/(derived a, derived b) noexcept { return derived(float(a) / float(b)); }
  /// Negation (flips the sign bit, also of NaN and zero).
  friend constexpr derived operator-(derived a) noexcept {
    return derived::from_bits(static_cast<std::uint16_t>(a.bits() ^ derived::sign_mask));
  }
  /// Identity.
  friend constexpr derived operator+(derived a) noexcept { return a; }
  /// In-place sum.
  friend constexpr derived& operator+=(derived& a, derived b) noexcept { return a = a + b; }
  /// In-place difference.
  friend constexpr derived& operator-=(derived& a, derived b) noexcept { return a = a - b; }
  /// In-place product.
  friend constexpr derived& operator*=(derived& a, derived b) noexcept { return a = a * b; }
  /// In-place quotient.
  friend constexpr derived& operator/=(derived& a, derived b) noexcept { return a = a / b; }
  /// IEEE equality: NaN differs from everything, -0 equals +0.
  friend constexpr bool operator==(derived a, derived b) noexcept { return float(a) == float(b); }
  /// IEEE ordering: unordered when either side is NaN.
  friend constexpr std::partial_ordering operator<=>(derived a, derived b) noexcept { return float(a) <=> float(b); }
  /// Prints the value as float prints.
  friend std::ostream& operator<<(std::ostream& os, derived a) { return os << float(a); }
};

} // namespace detail

/// IEEE 754 binary16 ("half", numpy's float16): 1 sign, 5 exponent and 10 mantissa bits.
class float16 : public detail::float16_operators<float16> {
public:
  /// The sign bit.
  static constexpr std::uint16_t sign_mask = 0x8000;

  /// Positive zero.
  constexpr float16() noexcept = default;

  /// Rounds any arithmetic value to the nearest half (ties to even). Doubles are rounded directly, not
  /// through float, as numpy does; integers go through double.
  template <class T>
    requires std::is_arithmetic_v<T>
  constexpr explicit float16(T value) noexcept
      : bits_(std::is_same_v<T, float> ? detail::float_to_half_bits(static_cast<float>(value))
                                       : detail::narrow_float_bits<5, 10>(static_cast<double>(value))) {}

  /// The half with this bit pattern.
  static constexpr float16 from_bits(std::uint16_t bits) noexcept {
    float16 h;
    h.bits_ = bits;
    return h;
  }

  /// The bit pattern.
  constexpr std::uint16_t bits() const noexcept { return bits_; }

  /// The exact value as float.
  constexpr explicit operator float() const noexcept { return detail::widen_float_bits<5, 10>(bits_); }

  /// The exact value as double.
  constexpr explicit operator double() const noexcept { return static_cast<double>(static_cast<float>(*this)); }

private:
  std::uint16_t bits_ = 0;
};

/// Brain float (bfloat16, as in JAX and ml_dtypes): float's 8 exponent bits with 7 mantissa bits.
class bfloat16 : public detail::float16_operators<bfloat16> {
public:
  /// The sign bit.
  static constexpr std::uint16_t sign_mask = 0x8000;

  /// Positive zero.
  constexpr bfloat16() noexcept = default;

  /// Rounds any arithmetic value to the nearest bfloat16 (ties to even). Like ml_dtypes, everything
  /// (doubles too) is first converted to float, so a double can be rounded twice.
  template <class T>
    requires std::is_arithmetic_v<T>
  constexpr explicit bfloat16(T value) noexcept : bits_(detail::float_to_bfloat16_bits(static_cast<float>(value))) {}

  /// The bfloat16 with this bit pattern.
  static constexpr bfloat16 from_bits(std::uint16_t bits) noexcept {
    bfloat16 b;
    b.bits_ = bits;
    return b;
  }

  /// The bit pattern.
  constexpr std::uint16_t bits() const noexcept { return bits_; }

  /// The exact value as float (the upper half of a float's bits).
  constexpr explicit operator float() const noexcept {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits_) << 16);
  }

  /// The exact value as double.
  constexpr explicit operator double() const noexcept { return static_cast<double>(static_cast<float>(*this)); }

private:
  std::uint16_t bits_ = 0;
};

static_assert(sizeof(float16) == 2 && std::is_trivially_copyable_v<float16>);
static_assert(sizeof(bfloat16) == 2 && std::is_trivially_copyable_v<bfloat16>);

/// True when a 16-bit float is NaN.
template <class T>
  requires std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>
constexpr bool isnan(T x) noexcept {
  return (x.bits() & 0x7fff) > (std::numeric_limits<T>::infinity().bits() & 0x7fff);
}

/// True when a 16-bit float is +inf or -inf.
template <class T>
  requires std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>
constexpr bool isinf(T x) noexcept {
  return (x.bits() & 0x7fff) == std::numeric_limits<T>::infinity().bits();
}

/// True when a 16-bit float is neither NaN nor infinite.
template <class T>
  requires std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>
constexpr bool isfinite(T x) noexcept {
  return (x.bits() & 0x7fff) < std::numeric_limits<T>::infinity().bits();
}

} // namespace am

/// numeric_limits for am::float16 (values as numpy's finfo(float16)).
template <>
class std::numeric_limits<am::float16> {
public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr bool is_iec559 = true;
  static constexpr bool is_bounded = true;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  static constexpr int digits = 11;
  static constexpr int digits10 = 3;
  static constexpr int max_digits10 = 5;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -13;
  static constexpr int max_exponent = 16;
  static constexpr am::float16 min() noexcept { return am::float16::from_bits(0x0400); }
  static constexpr am::float16 max() noexcept { return am::float16::from_bits(0x7bff); }
  static constexpr am::float16 lowest() noexcept { return am::float16::from_bits(0xfbff); }
  static constexpr am::float16 epsilon() noexcept { return am::float16::from_bits(0x1400); }
  static constexpr am::float16 round_error() noexcept { return am::float16::from_bits(0x3800); }
  static constexpr am::float16 infinity() noexcept { return am::float16::from_bits(0x7c00); }
  static constexpr am::float16 quiet_NaN() noexcept { return am::float16::from_bits(0x7e00); }
  static constexpr am::float16 signaling_NaN() noexcept { return am::float16::from_bits(0x7d00); }
  static constexpr am::float16 denorm_min() noexcept { return am::float16::from_bits(0x0001); }
};

/// numeric_limits for am::bfloat16 (values as ml_dtypes.finfo(bfloat16)).
template <>
class std::numeric_limits<am::bfloat16> {
public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr bool is_iec559 = false;
  static constexpr bool is_bounded = true;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  static constexpr int digits = 8;
  static constexpr int digits10 = 2;
  static constexpr int max_digits10 = 4;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -125;
  static constexpr int max_exponent = 128;
  static constexpr am::bfloat16 min() noexcept { return am::bfloat16::from_bits(0x0080); }
  static constexpr am::bfloat16 max() noexcept { return am::bfloat16::from_bits(0x7f7f); }
  static constexpr am::bfloat16 lowest() noexcept { return am::bfloat16::from_bits(0xff7f); }
  static constexpr am::bfloat16 epsilon() noexcept { return am::bfloat16::from_bits(0x3c00); }
  static constexpr am::bfloat16 round_error() noexcept { return am::bfloat16::from_bits(0x3f00); }
  static constexpr am::bfloat16 infinity() noexcept { return am::bfloat16::from_bits(0x7f80); }
  static constexpr am::bfloat16 quiet_NaN() noexcept { return am::bfloat16::from_bits(0x7fc0); }
  static constexpr am::bfloat16 signaling_NaN() noexcept { return am::bfloat16::from_bits(0x7fa0); }
  static constexpr am::bfloat16 denorm_min() noexcept { return am::bfloat16::from_bits(0x0001); }
};

#endif // ACTORMESH_ACTORS_FLOAT16_HPP
