/// Matrix products with a leading batch dim (the batched form of matmul that vmap and pmap
/// produce): one 2-D product per batch row, on the device holding that row.
#pragma once

#include "actormesh/sharding/array.hpp"

namespace am::detail {

/// [B, m, k] x [B, k, n] (or x [k, n] shared by every row) -> [B, m, n], laid out by `layout`.
array batch_dot(const array& x, const array& y, const sharding_ptr& layout);

/// x [..., m, k] times y [..., k, n] with numpy broadcasting of the leading dims, as a broadcast
/// product summed over k laid out by `layout` (for more than one batch dim).
array contract(const array& x, const array& y, const sharding_ptr& layout);

} // namespace am::detail
