#include "devices/collectives/reduce_kernels.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/float16.hpp"
#include "actormesh/actors/dtype_promotion.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace am::detail {

namespace {

template <class T>
constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

/// The sign bit of a floating value (of a 16-bit float, from its bits).
template <class T>
bool sign_bit(T x) {
  if constexpr (is_half_v<T>)
    return (x.bits() & T::sign_mask) != 0;
  else
    return std::signbit(x);
}

template <class T>
bool is_nan(T x) {
  if constexpr (is_half_v<T>)
    return am::isnan(x);
  else
    return x != x;
}

/// Addition; integers wrap in their own type (computed unsigned, so no signed overflow).
struct add_op {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return a + b;
    }
  }
};

/// IEEE 754-2019 maximum: NaN wins, +0 > -0; integers compare.
struct max_op {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return a < b ? b : a;
    } else {
      if (is_nan(a)) return a;
      if (is_nan(b)) return b;
      if (a == b) return sign_bit(a) ? b : a;
      return a < b ? b : a;
    }
  }
};

/// IEEE 754-2019 minimum: NaN wins, -0 < +0; integers compare.
struct min_op {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return b < a ? b : a;
    } else {
      if (is_nan(a)) return a;
      if (is_nan(b)) return b;
      if (a == b) return sign_bit(a) ? a : b;
      return b < a ? b : a;
    }
  }
};

/// Logical or / and of bool bytes (any nonzero byte is true; results are 0 or 1).
struct or_op {
  static std::uint8_t apply(std::uint8_t a, std::uint8_t b) { return (a != 0) | (b != 0); }
};
struct and_op {
  static std::uint8_t apply(std::uint8_t a, std::uint8_t b) { return (a != 0) & (b != 0); }
};

template <class T, class Op>
void elementwise(void* out, const void* a, const void* b, std::size_t n) {
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (std::size_t i = 0; i < n; ++i)
    o[i] = Op::apply(x[i], y[i]);
}

template <class T>
reduce_kernel typed_kernel(reduce_op op) {
  switch (op) {
    case reduce_op::sum:
    case reduce_op::mean: return &elementwise<T, add_op>;
    case reduce_op::max: return &elementwise<T, max_op>;
    case reduce_op::min: return &elementwise<T, min_op>;
  }
  throw value_error("unknown reduce_op");
}

/// Widens `n` float16 or bfloat16 elements to float (exactly).
void widen_to_float(dtype t, const void* in, float* out, std::size_t n) {
  auto widen = [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* x = static_cast<const T*>(in);
    for (std::size_t i = 0; i < n; ++i)
      out[i] = static_cast<float>(x[i]);
  };
  if (t == dtype::float16)
    widen(std::type_identity<float16>{});
  else if (t == dtype::bfloat16)
    widen(std::type_identity<bfloat16>{});
  else
    throw value_error(std::string("widen_to_float: ") + std::string(name(t)) + " is not a 16-bit float");
}

/// Rounds `n` floats to float16 or bfloat16, each divided by `divisor` first when it is not 1:
/// one rounding to the 16-bit type per element.
void narrow_from_float(dtype t, const float* in, void* out, std::size_t n, int divisor) {
  auto narrow = [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto* y = static_cast<T*>(out);
    if (divisor == 1) {
      for (std::size_t i = 0; i < n; ++i)
        y[i] = T(in[i]);
    } else {
      const auto d = static_cast<float>(divisor);
      for (std::size_t i = 0; i < n; ++i)
        y[i] = T(in[i] / d);
    }
  };
  if (t == dtype::float16)
    narrow(std::type_identity<float16>{});
  else if (t == dtype::bfloat16)
    narrow(std::type_identity<bfloat16>{});
  else
    throw value_error(std::string("narrow_from_float: ") + std::string(name(t)) + " is not a 16-bit float");
}

/// Elements accumulated in float per tile of reduce_blocks (on the stack).
constexpr std::size_t tile = 2048;

} // namespace

void check_reducible(dtype t, reduce_op op) {
  if (op == reduce_op::mean && !is_floating(t))
    throw type_error(std::string("reduce_op mean needs a floating dtype, got ") + std::string(name(t))
                     + ": JAX's pmean divides the integer psum with true division and returns a float array, "
                       "which a buffer of " + std::string(name(t)) + " cannot hold; reduce with sum and divide in "
                       "the float type you want");
  if (op == reduce_op::sum && t == dtype::bool_)
    throw type_error("reduce_op sum does not accept dtype bool: use max for a logical or, min for a logical "
                     "and, or sum an integer dtype");
}

bool accumulates_in_float(dtype t, reduce_op op) noexcept {
  return (t == dtype::float16 || t == dtype::bfloat16) && (op == reduce_op::sum || op == reduce_op::mean);
}

reduce_kernel kernel_for(dtype t, reduce_op op) {
  check_reducible(t, op);
  if (accumulates_in_float(t, op))
    throw value_error(std::string(name(t)) + " sums are accumulated in float32, not by a 16-bit kernel");
  if (t == dtype::bool_)
    return op == reduce_op::max ? &elementwise<std::uint8_t, or_op> : &elementwise<std::uint8_t, and_op>;
  return am::visit_dtype(t, [op](auto tag) -> reduce_kernel {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>)
      return nullptr; // handled above
    else
      return typed_kernel<T>(op);
  });
}

void divide_in_place(dtype t, void* data, std::size_t n, int divisor) {
  auto divide = [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto* x = static_cast<T*>(data);
    const auto d = static_cast<T>(divisor);
    for (std::size_t i = 0; i < n; ++i)
      x[i] /= d;
  };
  if (t == dtype::float32)
    divide(std::type_identity<float>{});
  else if (t == dtype::float64)
    divide(std::type_identity<double>{});
  else
    throw value_error(std::string("divide_in_place: ") + std::string(name(t)) + " is not float32 or float64");
}

void reduce_blocks(dtype t, reduce_op op, const void* blocks, int nblocks, std::size_t n, void* out) {
  check_reducible(t, op);
  if (n == 0)
    return;
  const auto* base = static_cast<const std::byte*>(blocks);
  const std::size_t block_bytes = n * size_of(t);
  if (accumulates_in_float(t, op)) {
    const int divisor = op == reduce_op::mean ? nblocks : 1;
    float acc[tile];
    float part[tile];
    for (std::size_t start = 0; start < n; start += tile) {
      const std::size_t len = std::min(tile, n - start);
      const std::size_t offset = start * size_of(t);
      widen_to_float(t, base + offset, acc, len);
      for (int b = 1; b < nblocks; ++b) {
        widen_to_float(t, base + b * block_bytes + offset, part, len);
        for (std::size_t i = 0; i < len; ++i)
          acc[i] += part[i];
      }
      narrow_from_float(t, acc, static_cast<std::byte*>(out) + offset, len, divisor);
    }
    return;
  }
  std::memcpy(out, blocks, block_bytes);
  const reduce_kernel kernel = kernel_for(t, op);
  for (int b = 1; b < nblocks; ++b)
    kernel(out, out, base + b * block_bytes, n);
  if (op == reduce_op::mean)
    divide_in_place(t, out, n, nblocks);
}

} // namespace am::detail
