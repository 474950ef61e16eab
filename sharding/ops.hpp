/// Elementwise operations on arrays (jax.numpy's), asynchronous: each returns at once with an array
/// whose shards the devices compute as per-shard programs. Operands follow numpy's broadcasting and
/// type promotion (actors/dtype_promotion.hpp); operands with different shardings are resharded to
/// the result's sharding: the sharding of the first operand that has the result's shape and is not
/// fully replicated, else of the first operand that has the result's shape, else a replicated one.
#ifndef ACTORMESH_SHARDING_OPS_HPP
#define ACTORMESH_SHARDING_OPS_HPP

#include "actormesh/sharding/array.hpp"

namespace am {

/// A Python-like scalar operand: weakly typed (it takes the array's dtype where numpy would).
struct scalar {
  double value = 0;
  bool is_integer = false;
  bool is_bool = false;

  scalar(double v) : value(v) {}
  scalar(float v) : value(v) {}
  scalar(int v) : value(v), is_integer(true) {}
  scalar(long v) : value(static_cast<double>(v)), is_integer(true) {}
  scalar(long long v) : value(static_cast<double>(v)), is_integer(true) {}
  scalar(bool v) : value(v ? 1 : 0), is_bool(true) {}
};

/// -x
array neg(const array& x);
/// |x|
array abs(const array& x);
/// sin x
array sin(const array& x);
/// cos x
array cos(const array& x);
/// tanh x
array tanh(const array& x);
/// e^x
array exp(const array& x);
/// natural log
array log(const array& x);
/// square root
array sqrt(const array& x);
/// x * x
array square(const array& x);

/// x + y
array add(const array& x, const array& y);
/// x - y
array subtract(const array& x, const array& y);
/// x * y
array multiply(const array& x, const array& y);
/// x / y: true division (integers give float64... as numpy: int / int -> float64)
array divide(const array& x, const array& y);
/// x // y as jnp.floor_divide (Python's `//` on arrays): integers round toward negative infinity
/// (x // 0 gives -2, 0 // 0 gives -1 and unsigned x // 0 all ones, as JAX on XLA gives them); floats
/// floor the quotient with JAX's sign handling (1.0 // 0.1 == 9.0, x // 0.0 is +-inf or NaN).
/// Dtypes as x + y, bool with bool giving int32 (JAX); the gradient is zero, as in JAX.
array floor_divide(const array& x, const array& y);
/// elementwise max, NaN-propagating
array maximum(const array& x, const array& y);
/// elementwise min, NaN-propagating
array minimum(const array& x, const array& y);
/// x ** y
array power(const array& x, const array& y);
/// x == y (bool)
array equal(const array& x, const array& y);
/// x != y (bool)
array not_equal(const array& x, const array& y);
/// x < y (bool)
array less(const array& x, const array& y);
/// x <= y (bool)
array less_equal(const array& x, const array& y);
/// x > y (bool)
array greater(const array& x, const array& y);
/// x >= y (bool)
array greater_equal(const array& x, const array& y);

/// The same with a scalar on either side.
array add(const array& x, scalar y);
array add(scalar x, const array& y);
array subtract(const array& x, scalar y);
array subtract(scalar x, const array& y);
array multiply(const array& x, scalar y);
array multiply(scalar x, const array& y);
array divide(const array& x, scalar y);
array floor_divide(const array& x, scalar y);
array floor_divide(scalar x, const array& y);
array divide(scalar x, const array& y);
array maximum(const array& x, scalar y);
array minimum(const array& x, scalar y);
array power(const array& x, scalar y);
array equal(const array& x, scalar y);
array not_equal(const array& x, scalar y);
array less(const array& x, scalar y);
array less_equal(const array& x, scalar y);
array greater(const array& x, scalar y);
array greater_equal(const array& x, scalar y);

/// cond ? x : y, elementwise, with broadcasting; cond is converted to bool.
array where(const array& cond, const array& x, const array& y);
/// where with scalar branches.
array where(const array& cond, scalar x, scalar y);
/// where with one scalar branch.
array where(const array& cond, const array& x, scalar y);
array where(const array& cond, scalar x, const array& y);

/// The elements converted to `type` (numpy's astype rules).
array astype(const array& x, am::dtype type);

/// Operators, as jax.numpy arrays have them.
array operator-(const array& x);
array operator+(const array& x, const array& y);
array operator-(const array& x, const array& y);
array operator*(const array& x, const array& y);
array operator/(const array& x, const array& y);
array operator+(const array& x, scalar y);
array operator+(scalar x, const array& y);
array operator-(const array& x, scalar y);
array operator-(scalar x, const array& y);
array operator*(const array& x, scalar y);
array operator*(scalar x, const array& y);
array operator/(const array& x, scalar y);
array operator/(scalar x, const array& y);
array operator<(const array& x, const array& y);
array operator<=(const array& x, const array& y);
array operator>(const array& x, const array& y);
array operator>=(const array& x, const array& y);
array operator<(const array& x, scalar y);
array operator<=(const array& x, scalar y);
array operator>(const array& x, scalar y);
array operator>=(const array& x, scalar y);

} // namespace am

#endif // ACTORMESH_SHARDING_OPS_HPP
