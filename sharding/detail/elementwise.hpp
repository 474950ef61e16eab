/// Building elementwise graph nodes: numpy's type promotion and broadcasting, the result's
/// sharding, and the converts and broadcasts operands need. Shared by ops, reductions and random.
#pragma once

#include "actormesh/actors/opcode.hpp"
#include "actormesh/sharding/ops.hpp"

#include <optional>

namespace am::detail {

/// An operand of an elementwise operation: an array or a weakly typed scalar.
struct operand {
  std::optional<array> value;
  std::optional<scalar> constant;

  operand(const array& a) : value(a) {}
  operand(scalar s) : constant(s) {}
};

/// A one-operand operation keeping the dtype.
array unary(opcode op, const array& x);

/// A one-operand operation on floats: integers and bool are converted to float64 first (numpy).
array unary_float(opcode op, const array& x);

/// A two-operand operation with promotion (divide of integers gives float64) and broadcasting.
array binary(opcode op, const operand& x, const operand& y);

/// cond ? x : y with broadcasting; cond converted to bool.
array select(const array& cond, const operand& x, const operand& y);

/// `x` converted to `type` (x itself when it already has it).
array convert(const array& x, am::dtype type);

/// `x` broadcast (numpy) to `shape` laid out by `layout`.
array broadcast_to(const array& x, const shape_t& shape, const sharding_ptr& layout);

} // namespace am::detail
