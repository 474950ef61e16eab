/// Which dtype an operation on two dtypes yields (numpy's or JAX's promotion), and the mapping between
/// dtypes and the C++ types that hold their elements.
///
/// Host data (am::host_array) follows numpy; the device arrays (am::array) follow jax.numpy by
/// default (array_promotion_rule), with numpy's rule available as an option. Python scalars are "weak" as in numpy 2 (NEP 50) and JAX: they take
/// the array's dtype unless their kind is higher (a float scalar with an integer array).
#ifndef ACTORMESH_ACTORS_DTYPE_PROMOTION_HPP
#define ACTORMESH_ACTORS_DTYPE_PROMOTION_HPP

#include <climits>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "actormesh/actors/dtype.hpp"
#include "actormesh/actors/float16.hpp"

namespace am {

/// The promotion rule to apply.
enum class promotion_rule : std::uint8_t {
  /// numpy 2 with ml_dtypes' bfloat16 (`np.promote_types`). Mixed integer/float pairs take the
  /// smallest float that holds every value of both (int32 + float32 -> float64, int64 + float16 ->
  /// float64). numpy refuses three pairs involving bfloat16 (bfloat16 with int32, int64 or float16);
  /// we complete them by the same rule: bfloat16 + float16 -> float32 (as JAX and ml_dtypes'
  /// documentation give), bfloat16 + int32/int64 -> float64.
  numpy,
  /// `jax.numpy.promote_types` with jax_enable_x64 on: any integer with a float gives that float
  /// (int64 + float16 -> float16), bfloat16 + float16 -> float32.
  jax,
};

/// The dtype numpy (or JAX) gives an operation on values of dtypes `a` and `b`; symmetric.
dtype promote_types(dtype a, dtype b, promotion_rule rule = promotion_rule::numpy) noexcept;

/// The rule the device-array operations (am::array: elementwise operations, division, float functions
/// of integers, mean) follow: `promotion_rule::jax` unless set otherwise, as jax.numpy does; process
/// wide, like jax's `jax_numpy_dtype_promotion` setting. Host arrays (am::host_array) always follow numpy.
promotion_rule array_promotion_rule() noexcept;

/// Sets the rule of array_promotion_rule() for the whole process (safe from any thread; operations
/// already traced keep the dtypes they were given).
void set_array_promotion_rule(promotion_rule rule) noexcept;

/// Sets array_promotion_rule() for the life of the object and restores the previous rule after it.
class array_promotion_scope {
public:
  /// Makes `rule` the array rule until this object ends.
  explicit array_promotion_scope(promotion_rule rule) noexcept : previous_(array_promotion_rule()) {
    set_array_promotion_rule(rule);
  }
  ~array_promotion_scope() { set_array_promotion_rule(previous_); }
  array_promotion_scope(const array_promotion_scope&) = delete;
  array_promotion_scope& operator=(const array_promotion_scope&) = delete;

private:
  promotion_rule previous_;
};

/// The float dtype that true division and the float functions (sin, sqrt, ...) compute a dtype in,
/// and that mean gives: a float dtype stays; otherwise jax.numpy (x64) gives float32 for bool, uint8
/// and int32 and float64 for int64, and numpy gives float16 for bool and uint8 and float64 for int32
/// and int64 (numpy's mean and true division give float64 for every non-float dtype: see
/// mean_dtype and true_divide_dtype).
dtype inexact_dtype(dtype t, promotion_rule rule) noexcept;

/// The dtype of mean over values of dtype `t`: inexact_dtype under JAX's rule, float64 for any
/// non-float dtype under numpy's.
dtype mean_dtype(dtype t, promotion_rule rule) noexcept;

/// The dtype true division of operands promoted to `t` gives: as mean_dtype.
dtype true_divide_dtype(dtype t, promotion_rule rule) noexcept;

/// The dtype of sum over values of dtype `t` (both rules): bool, uint8 and int32 sum as int64
/// (numpy and JAX give uint64 for uint8, which actormesh lacks; int64 holds every such sum of fewer
/// than 2**55 elements exactly).
dtype sum_dtype(dtype t) noexcept;

/// The dtype of square(x) for x of dtype `t`: bool squares as int32 under JAX (x * x of bools is
/// an integer; numpy gives int8, which actormesh lacks, so int32 there too); any other dtype stays.
dtype square_dtype(dtype t) noexcept;

/// The result dtype of a matrix product of `a` and `b` under the array rule: their promotion, bool
/// taken to int64 (the dot kernels count; JAX keeps bool, a logical or of ands).
dtype dot_dtype(dtype a, dtype b) noexcept;

/// The kind of a Python-style scalar operand (a C++ literal in a mixed array-scalar operation).
enum class scalar_kind : std::uint8_t {
  boolean,   ///< Python bool
  integer,   ///< Python int
  floating,  ///< Python float
};

/// The dtype of `array op scalar` with a weak scalar (numpy 2 NEP 50, and JAX with x64): a bool scalar
/// never changes the dtype; an int scalar keeps any integer or float dtype and makes bool int64; a float
/// scalar keeps any float dtype (float16 stays float16) and makes bool or integer float64.
/// One deliberate difference from numpy + ml_dtypes: a bfloat16 array with a float scalar stays
/// bfloat16 (as in JAX and NEP 50); ml_dtypes gives float32 there.
dtype promote_with_scalar(dtype array_dtype, scalar_kind kind) noexcept;

/// Checks that an integer scalar fits the integer dtype it will be converted to in `array op value`
/// (numpy 2 raises OverflowError, here value_error: "Python integer 300 out of bounds for uint8").
/// Bool and float arrays accept any value.
void check_integer_scalar(dtype array_dtype, std::int64_t value);

namespace detail {

template <class T>
constexpr dtype dtype_of_impl() noexcept {
  if constexpr (std::is_same_v<T, bool>) return dtype::bool_;
  else if constexpr (std::is_same_v<T, float16>) return dtype::float16;
  else if constexpr (std::is_same_v<T, bfloat16>) return dtype::bfloat16;
  else if constexpr (std::is_same_v<T, float>) return dtype::float32;
  else if constexpr (std::is_same_v<T, double>) return dtype::float64;
  else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T> && sizeof(T) == 1) return dtype::uint8;
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) == 4) return dtype::int32;
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) == 8) return dtype::int64;
  else static_assert(sizeof(T) == 0, "no actormesh dtype holds this C++ type");
}

template <class T>
inline constexpr bool has_dtype_v =
    std::is_same_v<T, bool> || std::is_same_v<T, float16> || std::is_same_v<T, bfloat16> ||
    std::is_same_v<T, float> || std::is_same_v<T, double> ||
    (std::is_integral_v<T> && !std::is_same_v<T, char> &&
     ((std::is_unsigned_v<T> && sizeof(T) == 1) || (std::is_signed_v<T> && (sizeof(T) == 4 || sizeof(T) == 8))));

} // namespace detail

/// A C++ type that is the element type of one of the dtypes: bool, std::uint8_t, std::int32_t,
/// std::int64_t (also `long long`), float16, bfloat16, float, double.
template <class T>
concept element_type = detail::has_dtype_v<std::remove_cv_t<T>>;

/// The dtype whose elements are of C++ type T (e.g. `dtype_of<float>() == dtype::float32`).
template <element_type T>
constexpr dtype dtype_of() noexcept {
  return detail::dtype_of_impl<std::remove_cv_t<T>>();
}

/// The C++ type holding elements of dtype D (e.g. `element_t<dtype::int32>` is std::int32_t).
template <dtype D>
using element_t = std::conditional_t<
    D == dtype::bool_, bool,
    std::conditional_t<
        D == dtype::uint8, std::uint8_t,
        std::conditional_t<
            D == dtype::int32, std::int32_t,
            std::conditional_t<
                D == dtype::int64, std::int64_t,
                std::conditional_t<D == dtype::float16, float16,
                                   std::conditional_t<D == dtype::bfloat16, bfloat16,
                                                      std::conditional_t<D == dtype::float32, float, double>>>>>>>;

/// Converts one element between element types with numpy's `astype` semantics, as numpy behaves on
/// x86-64 (whose C casts it inherits), so results match numpy bit for bit:
/// - to bool: nonzero is true (NaN too); from bool: 0 or 1;
/// - integer to integer: two's-complement wrap-around (300 -> uint8 44, -1 -> uint8 255);
/// - float to int32/int64: truncation toward zero; NaN, infinity and out-of-range values give the
///   type's minimum (INT32_MIN, INT64_MIN); float to uint8 goes through int32 and wraps (300.7 -> 44,
///   -1.7 -> 255, NaN -> 0);
/// - to a float type: round to nearest even, overflow to infinity (double -> float16 directly as numpy
///   does; anything -> bfloat16 through float as ml_dtypes does).
template <element_type To, element_type From>
constexpr To convert_element(From value) noexcept {
  using from = std::remove_cv_t<From>;
  constexpr bool from_half = std::is_same_v<from, float16> || std::is_same_v<from, bfloat16>;
  if constexpr (std::is_same_v<To, from>) {
    return value;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (from_half) return static_cast<float>(value) != 0.0f;
    else return value != 0;
  } else if constexpr (std::is_same_v<from, bool>) {
    return To(value ? 1 : 0);
  } else if constexpr (from_half) {
    return convert_element<To>(static_cast<float>(value));
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<from>) {
    return static_cast<To>(value);
  } else if constexpr (std::is_integral_v<To>) {  // from float or double
    const double d = static_cast<double>(value);
    if constexpr (sizeof(To) == 8) {
      if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
      return static_cast<To>(d);
    } else {
      const std::int32_t i = (d > -2147483649.0 && d < 2147483648.0) ? static_cast<std::int32_t>(d) : INT32_MIN;
      return static_cast<To>(i);
    }
  } else {
    return To(value);  // float, double, float16, bfloat16 from an integer, float or double
  }
}

/// Calls `f(std::type_identity<T>{})` with T the element type of `t`, and returns what f returns: the
/// one place where a runtime dtype becomes a compile-time type (elementwise loops, conversions).
template <class F>
decltype(auto) visit_dtype(dtype t, F&& f) {
  switch (t) {
    case dtype::bool_: return std::forward<F>(f)(std::type_identity<bool>{});
    case dtype::uint8: return std::forward<F>(f)(std::type_identity<std::uint8_t>{});
    case dtype::int32: return std::forward<F>(f)(std::type_identity<std::int32_t>{});
    case dtype::int64: return std::forward<F>(f)(std::type_identity<std::int64_t>{});
    case dtype::float16: return std::forward<F>(f)(std::type_identity<float16>{});
    case dtype::bfloat16: return std::forward<F>(f)(std::type_identity<bfloat16>{});
    case dtype::float32: return std::forward<F>(f)(std::type_identity<float>{});
    case dtype::float64: break;
  }
  return std::forward<F>(f)(std::type_identity<double>{});
}

} // namespace am

#endif // ACTORMESH_ACTORS_DTYPE_PROMOTION_HPP
