#include "actormesh/sharding/reductions.hpp"

#include "actormesh/actors/dtype_promotion.hpp"
#include "sharding/detail/axes.hpp"
#include "sharding/detail/elementwise.hpp"
#include "actormesh/sharding/detail/graph.hpp"
#include "sharding/detail/sharding_rules.hpp"
#include "actormesh/sharding/detail/trace.hpp"

#include <numeric>

namespace am {

namespace {

std::vector<std::int64_t> all_axes(const array& x) {
  std::vector<std::int64_t> axes(static_cast<std::size_t>(x.ndim()));
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}

array reduce(opcode op, const array& x, std::vector<std::int64_t> axes) {
  axes = detail::normalize_axes(std::move(axes), x.ndim());
  detail::node n;
  n.kind = detail::node_kind::reduce;
  n.op = op;
  for (std::int64_t d = 0; d < x.ndim(); ++d)
    if (!std::binary_search(axes.begin(), axes.end(), d))
      n.shape.push_back(x.shape()[static_cast<std::size_t>(d)]);
  n.type = x.dtype();
  n.layout = detail::reduced(x.sharding(), x.shape().size(), axes);
  n.attrs = std::move(axes);
  return detail::apply(std::move(n), {x});
}

std::int64_t count_over(const array& x, const std::vector<std::int64_t>& axes) {
  std::int64_t n = 1;
  for (auto a : detail::normalize_axes(axes, x.ndim()))
    n *= x.shape()[static_cast<std::size_t>(a)];
  return n;
}

/// max and min have no identity: like jax.numpy, a reduction over an axis of extent 0 is refused
/// (other axes may be empty: the result is then empty too).
void check_identity(const array& x, const std::vector<std::int64_t>& axes, const char* what) {
  for (auto a : detail::normalize_axes(axes, x.ndim()))
    if (x.shape()[static_cast<std::size_t>(a)] == 0)
      throw value_error(std::string("zero-size array to reduction operation ") + what + " which has no identity");
}

} // namespace

array sum(const array& x) { return sum(x, all_axes(x)); }

array sum(const array& x, std::vector<std::int64_t> axes) {
  return reduce(opcode::reduce_sum, detail::convert(x, sum_dtype(x.dtype())), std::move(axes));
}

array mean(const array& x) { return mean(x, all_axes(x)); }

array mean(const array& x, std::vector<std::int64_t> axes) {
  auto n = count_over(x, axes);
  auto t = mean_dtype(x.dtype(), array_promotion_rule());
  auto total = reduce(opcode::reduce_sum, detail::convert(x, t), std::move(axes));
  return divide(total, scalar(static_cast<double>(n)));
}

array max(const array& x) { return max(x, all_axes(x)); }

array max(const array& x, std::vector<std::int64_t> axes) {
  check_identity(x, axes, "max");
  return reduce(opcode::reduce_max, x, std::move(axes));
}

array min(const array& x) { return min(x, all_axes(x)); }

array min(const array& x, std::vector<std::int64_t> axes) {
  check_identity(x, axes, "min");
  return reduce(opcode::reduce_min, x, std::move(axes));
}

} // namespace am
