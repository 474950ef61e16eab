/// The promotion tables (generated once from numpy 2.4 + ml_dtypes 0.6 and jax 0.10 with x64, then
/// completed where numpy refuses; see dtype_promotion.hpp) and the weak-scalar rule.
#include "actormesh/actors/dtype_promotion.hpp"

#include <array>
#include <atomic>
#include <string>

#include "actormesh/actors/errors.hpp"

namespace am {

namespace {

using enum dtype;

// Row and column order: bool, uint8, int32, int64, float16, bfloat16, float32, float64.
using table = std::array<std::array<dtype, dtype_count>, dtype_count>;

// np.promote_types; the "ERR" cells of numpy (bfloat16 with int32, int64, float16) completed with
// the smallest float holding both: float64, float64, float32.
constexpr table numpy_table = {{
    {bool_, uint8, int32, int64, float16, bfloat16, float32, float64},
    {uint8, uint8, int32, int64, float16, bfloat16, float32, float64},
    {int32, int32, int32, int64, float64, float64, float64, float64},
    {int64, int64, int64, int64, float64, float64, float64, float64},
    {float16, float16, float64, float64, float16, float32, float32, float64},
    {bfloat16, bfloat16, float64, float64, float32, bfloat16, float32, float64},
    {float32, float32, float64, float64, float32, float32, float32, float64},
    {float64, float64, float64, float64, float64, float64, float64, float64},
}};

// jnp.promote_types with jax_enable_x64.
constexpr table jax_table = {{
    {bool_, uint8, int32, int64, float16, bfloat16, float32, float64},
    {uint8, uint8, int32, int64, float16, bfloat16, float32, float64},
    {int32, int32, int32, int64, float16, bfloat16, float32, float64},
    {int64, int64, int64, int64, float16, bfloat16, float32, float64},
    {float16, float16, float16, float16, float16, float32, float32, float64},
    {bfloat16, bfloat16, bfloat16, bfloat16, float32, bfloat16, float32, float64},
    {float32, float32, float32, float32, float32, float32, float32, float64},
    {float64, float64, float64, float64, float64, float64, float64, float64},
}};

constexpr bool symmetric(const table& t) {
  for (std::size_t i = 0; i < dtype_count; ++i)
    for (std::size_t j = 0; j < dtype_count; ++j)
      if (t[i][j] != t[j][i]) return false;
  return true;
}
static_assert(symmetric(numpy_table) && symmetric(jax_table));

} // namespace

dtype promote_types(dtype a, dtype b, promotion_rule rule) noexcept {
  const auto& t = rule == promotion_rule::jax ? jax_table : numpy_table;
  return t[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
}

namespace {
std::atomic<promotion_rule> array_rule{promotion_rule::jax};
} // namespace

promotion_rule array_promotion_rule() noexcept {
  return array_rule.load(std::memory_order_relaxed);
}

void set_array_promotion_rule(promotion_rule rule) noexcept {
  array_rule.store(rule, std::memory_order_relaxed);
}

dtype inexact_dtype(dtype t, promotion_rule rule) noexcept {
  if (is_floating(t))
    return t;
  bool narrow = t == bool_ || t == uint8;
  if (rule == promotion_rule::numpy)
    return narrow ? dtype::float16 : float64;
  return narrow || t == int32 ? float32 : float64;
}

dtype mean_dtype(dtype t, promotion_rule rule) noexcept {
  return rule == promotion_rule::jax || is_floating(t) ? inexact_dtype(t, rule) : float64;
}

dtype true_divide_dtype(dtype t, promotion_rule rule) noexcept {
  return mean_dtype(t, rule);
}

dtype sum_dtype(dtype t) noexcept {
  return t == bool_ || t == uint8 || t == int32 ? int64 : t;
}

dtype square_dtype(dtype t) noexcept {
  return t == bool_ ? int32 : t;
}

dtype promote_with_scalar(dtype array_dtype, scalar_kind kind) noexcept {
  switch (kind) {
    case scalar_kind::boolean: return array_dtype;
    case scalar_kind::integer: return array_dtype == bool_ ? int64 : array_dtype;
    case scalar_kind::floating: return is_floating(array_dtype) ? array_dtype : float64;
  }
  return array_dtype;
}

void check_integer_scalar(dtype array_dtype, std::int64_t value) {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  switch (array_dtype) {
    case uint8: lo = 0, hi = 255; break;
    case int32: lo = INT32_MIN, hi = INT32_MAX; break;
    default: return;  // int64 holds every int64; bool and float arrays take any integer
  }
  if (value < lo || value > hi)
    throw value_error("Python integer " + std::to_string(value) + " out of bounds for " +
                      std::string(name(array_dtype)));
}

dtype dot_dtype(dtype a, dtype b) noexcept {
  auto t = promote_types(a, b, array_promotion_rule());
  return t == dtype::bool_ ? dtype::int64 : t;
}

} // namespace am
