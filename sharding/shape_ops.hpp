/// Reshape, transpose and matrix product of sharded arrays.
#ifndef ACTORMESH_SHARDING_SHAPE_OPS_HPP
#define ACTORMESH_SHARDING_SHAPE_OPS_HPP

#include "actormesh/sharding/array.hpp"

#include <vector>

namespace am {

/// The same elements in a new shape (one extent may be -1). When the sharded leading dims are kept,
/// each device reshapes its own block; otherwise the result is replicated over the same devices.
array reshape(const array& x, shape_t shape);

/// Dims permuted (default: reversed); the sharding is permuted with them.
array transpose(const array& x, std::vector<std::int64_t> axes = {});

/// x @ y as jnp.matmul: 2-D [m,k] @ [k,n] -> [m,n]; a 1-D x is a row and a 1-D y a column, their
/// dim dropped from the result; more dims are batch dims, broadcast with numpy's rule
/// ([2,1,m,k] @ [5,k,n] -> [2,5,m,n]); a y without batch dims is shared by every batch row. Float
/// dtypes run through BLAS (cuBLAS on CUDA devices), one call per batch row. A row-sharded x with a
/// replicated y runs without moving data; other layouts move the blocks each device needs first.
/// The result is sharded like x's batch dims and rows and y's columns (named shardings on one mesh),
/// else like x's. Mismatched contracting dims: am::type_error "dot_general requires contracting
/// dimensions to have the same shape, got (4,) and (5,)." (JAX's words).
array matmul(const array& x, const array& y);

/// jnp.dot: for 1-D and 2-D operands as matmul; for an N-D x and M-D y (M >= 2) the sum over x's
/// last dim and y's second-to-last: the result's shape is x's without its last dim, then y's without
/// its second-to-last. A 0-D operand multiplies elementwise.
array dot(const array& x, const array& y);

} // namespace am

#endif // ACTORMESH_SHARDING_SHAPE_OPS_HPP
