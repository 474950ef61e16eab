/// Reshape, transpose and matrix product of sharded arrays.
#pragma once

#include "sharding/array.hpp"

#include <vector>

namespace am {

/// The same elements in a new shape (one extent may be -1). When the sharded leading dims are kept,
/// each device reshapes its own block; otherwise the result is replicated over the same devices.
array reshape(const array& x, shape_t shape);

/// Dims permuted (default: reversed); the sharding is permuted with them.
array transpose(const array& x, std::vector<std::int64_t> axes = {});

/// The 2-D matrix product x @ y. A row-sharded x with a replicated y runs without moving data; other
/// layouts move the blocks each device needs first. The result is sharded like x's rows and y's
/// columns (named shardings on one mesh), else like x's rows.
array matmul(const array& x, const array& y);

} // namespace am
