/// The vector-Jacobian product of every graph node kind: given the cotangent of a node's result,
/// the cotangents of its operands, as array operations (recorded into the current trace).
#pragma once

#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/detail/graph.hpp"

#include <optional>
#include <vector>

namespace am::detail {

/// The cotangents of node `n`'s operands (`operands`, as arrays; `result` is the node's value)
/// for the cotangent `ct` of its result; nullopt for an operand that gets none (integers, masks).
/// `wanted[k]` false: operand k's cotangent is not needed, and a rule whose cotangents are costly
/// (matrix products) records nothing for it (JAX never computes the gradient of the data).
std::vector<std::optional<array>> vjp(const node& n, const std::vector<array>& operands, const array& result,
                                      const array& ct, const std::vector<bool>& wanted);

/// A take node: row i of the result is row rows[i] of `x` along dim 0 (-1: zeros).
array take_rows(const array& x, const std::vector<std::int64_t>& rows, const sharding_ptr& layout);

} // namespace am::detail
