#include "actormesh/sharding/shape_ops.hpp"

#include "actormesh/actors/dtype_promotion.hpp"
#include "actormesh/actors/errors.hpp"
#include "sharding/detail/axes.hpp"
#include "sharding/detail/elementwise.hpp"
#include "actormesh/sharding/detail/graph.hpp"
#include "sharding/detail/sharding_rules.hpp"
#include "actormesh/sharding/detail/trace.hpp"

#include <numeric>

namespace am {

namespace {

/// numpy's reshape target: one -1 inferred; "cannot reshape array of size 12 into shape (5,)".
shape_t resolve_shape(std::int64_t size, shape_t shape) {
  std::optional<std::int64_t> known = 1; // product of the given extents; nothing past int64
  int unknown = -1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (unknown >= 0)
        throw value_error("can only specify one unknown dimension");
      unknown = static_cast<int>(i);
    } else if (shape[i] < 0) {
      throw value_error("negative dimensions not allowed");
    } else if (known) {
      known = checked_mul(*known, shape[i]);
    }
  }
  if (unknown >= 0 && known && *known > 0 && size % *known == 0)
    shape[static_cast<std::size_t>(unknown)] = size / *known;
  if (!known || try_element_count(shape) != size || (unknown >= 0 && *known == 0))
    throw value_error("cannot reshape array of size " + std::to_string(size) + " into shape "
                      + shape_to_string(shape));
  return shape;
}

} // namespace

array reshape(const array& x, shape_t shape) {
  shape = resolve_shape(x.size(), std::move(shape));
  if (shape == x.shape())
    return x;
  std::size_t kept = 0;
  while (kept < shape.size() && kept < x.shape().size() && shape[kept] == x.shape()[kept])
    ++kept;
  detail::node n;
  n.kind = detail::node_kind::reshape;
  n.shape = shape;
  n.type = x.dtype();
  n.layout = detail::reshaped(x.sharding(), x.shape().size(), kept);
  n.layout->check_compatible(n.shape);
  return detail::apply(std::move(n), {x});
}

array transpose(const array& x, std::vector<std::int64_t> axes) {
  auto nd = x.ndim();
  if (axes.empty()) {
    axes.resize(static_cast<std::size_t>(nd));
    std::iota(axes.rbegin(), axes.rend(), 0);
  }
  if (static_cast<std::int64_t>(axes.size()) != nd)
    throw value_error("axes don't match array");
  for (auto& a : axes)
    a = detail::normalize_axis(a, nd);
  auto sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw value_error("repeated axis in transpose");
  detail::node n;
  n.kind = detail::node_kind::transpose;
  for (auto a : axes)
    n.shape.push_back(x.shape()[static_cast<std::size_t>(a)]);
  n.type = x.dtype();
  n.layout = detail::transposed(x.sharding(), axes);
  n.attrs = std::move(axes);
  return detail::apply(std::move(n), {x});
}

} // namespace am
