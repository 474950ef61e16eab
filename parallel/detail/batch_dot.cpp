#include "parallel/detail/batch_dot.hpp"

#include "actormesh/actors/dtype_promotion.hpp"
#include "actormesh/actors/errors.hpp"
#include "sharding/detail/elementwise.hpp"
#include "actormesh/sharding/detail/graph.hpp"
#include "actormesh/sharding/detail/trace.hpp"
#include "actormesh/sharding/ops.hpp"
#include "actormesh/sharding/reductions.hpp"
#include "actormesh/sharding/shape_ops.hpp"

namespace am::detail {

array batch_dot(const array& x, const array& y, const sharding_ptr& layout) {
  if (x.ndim() != 3 || (y.ndim() != 3 && y.ndim() != 2))
    throw runtime_error("internal: batch_dot takes [B, m, k] and [B, k, n] or [k, n]");
  auto t = dot_dtype(x.dtype(), y.dtype()); // as matmul: vmap of a matmul gives the same dtype
  node n;
  n.kind = node_kind::batch_dot;
  n.shape = {x.shape()[0], x.shape()[1], y.shape().back()};
  n.type = t;
  n.layout = layout;
  return apply(std::move(n), {convert(x, t), convert(y, t)});
}

array contract(const array& x, const array& y, const sharding_ptr& layout) {
  auto xs = x.shape(), ys = y.shape();
  auto rank = std::max(xs.size(), ys.size());
  xs.insert(xs.begin(), rank - xs.size(), 1);
  ys.insert(ys.begin(), rank - ys.size(), 1);
  auto xr = xs;
  xr.push_back(1); // [..., m, k, 1]
  auto yr = ys;
  yr.insert(yr.end() - 2, 1); // [..., 1, k, n]
  shape_t full(xr.begin(), xr.end() - 1);
  full.push_back(ys.back()); // [..., m, k, n] with the leading dims broadcast
  for (std::size_t i = 0; i + 3 < full.size(); ++i)
    full[i] = std::max(xs[i], ys[i]);
  auto product = broadcast_to(reshape(x, xr), full, layout) * broadcast_to(reshape(y, yr), full, layout);
  return sum(product, {static_cast<std::int64_t>(rank) - 1});
}

} // namespace am::detail
