#include "actormesh/sharding/ops.hpp"

#include "actormesh/actors/dtype_promotion.hpp"
#include "actormesh/actors/errors.hpp"
#include "sharding/detail/elementwise.hpp"

namespace am {

using detail::operand;

array neg(const array& x) { return detail::unary(opcode::neg, x); }
array abs(const array& x) { return detail::unary(opcode::abs, x); }
array sin(const array& x) { return detail::unary_float(opcode::sin, x); }
array cos(const array& x) { return detail::unary_float(opcode::cos, x); }
array tanh(const array& x) { return detail::unary_float(opcode::tanh, x); }
array exp(const array& x) { return detail::unary_float(opcode::exp, x); }
array log(const array& x) { return detail::unary_float(opcode::log, x); }
array sqrt(const array& x) { return detail::unary_float(opcode::sqrt, x); }
array square(const array& x) { return detail::unary(opcode::square, detail::convert(x, square_dtype(x.dtype()))); }

#define AM_BINARY_OP(fn, code)                                                                     \
  array fn(const array& x, const array& y) { return detail::binary(code, operand(x), operand(y)); } \
  array fn(const array& x, scalar y) { return detail::binary(code, operand(x), operand(y)); }

AM_BINARY_OP(add, opcode::add)
AM_BINARY_OP(subtract, opcode::subtract)
AM_BINARY_OP(multiply, opcode::multiply)
AM_BINARY_OP(divide, opcode::divide)
AM_BINARY_OP(floor_divide, opcode::floor_divide)
AM_BINARY_OP(maximum, opcode::maximum)
AM_BINARY_OP(minimum, opcode::minimum)
AM_BINARY_OP(power, opcode::power)
AM_BINARY_OP(equal, opcode::equal)
AM_BINARY_OP(not_equal, opcode::not_equal)
AM_BINARY_OP(less, opcode::less)
AM_BINARY_OP(less_equal, opcode::less_equal)
AM_BINARY_OP(greater, opcode::greater)
AM_BINARY_OP(greater_equal, opcode::greater_equal)
#undef AM_BINARY_OP

array add(scalar x, const array& y) { return detail::binary(opcode::add, operand(x), operand(y)); }
array subtract(scalar x, const array& y) { return detail::binary(opcode::subtract, operand(x), operand(y)); }
array multiply(scalar x, const array& y) { return detail::binary(opcode::multiply, operand(x), operand(y)); }
array divide(scalar x, const array& y) { return detail::binary(opcode::divide, operand(x), operand(y)); }
array floor_divide(scalar x, const array& y) {
  return detail::binary(opcode::floor_divide, operand(x), operand(y));
}

array where(const array& cond, const array& x, const array& y) {
  return detail::select(cond, operand(x), operand(y));
}

array where(const array& cond, scalar x, scalar y) {
  return detail::select(cond, operand(x), operand(y));
}

array where(const array& cond, const array& x, scalar y) {
  return detail::select(cond, operand(x), operand(y));
}

array where(const array& cond, scalar x, const array& y) {
  return detail::select(cond, operand(x), operand(y));
}

array astype(const array& x, am::dtype type) {
  return detail::convert(x, type);
}

array operator-(const array& x) { return neg(x); }
array operator+(const array& x, const array& y) { return add(x, y); }
array operator-(const array& x, const array& y) { return subtract(x, y); }
array operator*(const array& x, const array& y) { return multiply(x, y); }
array operator/(const array& x, const array& y) { return divide(x, y); }
array operator+(const array& x, scalar y) { return add(x, y); }
array operator+(scalar x, const array& y) { return add(x, y); }
array operator-(const array& x, scalar y) { return subtract(x, y); }
array operator-(scalar x, const array& y) { return subtract(x, y); }
array operator*(const array& x, scalar y) { return multiply(x, y); }
array operator*(scalar x, const array& y) { return multiply(x, y); }
array operator/(const array& x, scalar y) { return divide(x, y); }
array operator/(scalar x, const array& y) { return divide(x, y); }
array operator<(const array& x, const array& y) { return less(x, y); }
array operator<=(const array& x, const array& y) { return less_equal(x, y); }
array operator>(const array& x, const array& y) { return greater(x, y); }
array operator>=(const array& x, const array& y) { return greater_equal(x, y); }
array operator<(const array& x, scalar y) { return less(x, y); }
array operator<=(const array& x, scalar y) { return less_equal(x, y); }
array operator>(const array& x, scalar y) { return greater(x, y); }
array operator>=(const array& x, scalar y) { return greater_equal(x, y); }

} // namespace am
