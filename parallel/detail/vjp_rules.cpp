#include "parallel/detail/vjp_rules.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/parallel/collectives.hpp"
#include "parallel/detail/batch_dot.hpp"
#include "parallel/detail/collective_node.hpp"
#include "sharding/detail/elementwise.hpp"
#include "actormesh/sharding/detail/trace.hpp"
#include "actormesh/sharding/ops.hpp"
#include "actormesh/sharding/reductions.hpp"
#include "actormesh/sharding/shape_ops.hpp"

#include <algorithm>

namespace am::detail {

namespace {

using maybe = std::optional<array>;

/// `ct` of a reduced result brought back to the operand's shape: the reduced dims reinserted as
/// size 1, then broadcast.
array unreduce(const array& ct, const node& n, const array& x) {
  auto keep = x.shape();
  for (auto a : n.attrs)
    keep[static_cast<std::size_t>(a)] = 1;
  return broadcast_to(reshape(ct, keep), x.shape(), x.sharding());
}

std::vector<maybe> elementwise_vjp(const node& n, const std::vector<array>& in, const array& out, const array& g) {
  auto& x = in[0];
  switch (n.op) {
    case opcode::neg: return {neg(g)};
    case opcode::abs: return {where(x >= scalar(0), g, neg(g))};
    case opcode::sin: return {g * cos(x)};
    case opcode::cos: return {neg(g * sin(x))};
    case opcode::tanh: return {g * (scalar(1) - out * out)};
    case opcode::exp: return {g * out};
    case opcode::log: return {g / x};
    case opcode::sqrt: return {g / (out * scalar(2))};
    case opcode::square: return {g * (x * scalar(2))};
    case opcode::convert:
      if (is_floating(x.dtype()) && is_floating(n.type))
        return {convert(g, x.dtype())};
      return {std::nullopt};
    case opcode::add: return {g, g};
    case opcode::subtract: return {g, neg(g)};
    case opcode::multiply: return {g * in[1], g * x};
    case opcode::divide: return {g / in[1], neg(g * x / (in[1] * in[1]))};
    case opcode::maximum:
    case opcode::minimum: {
      // JAX's balanced rule: ties split the cotangent in half.
      auto& y = in[1];
      auto x_wins = n.op == opcode::maximum ? greater(x, y) : less(x, y);
      auto y_wins = n.op == opcode::maximum ? greater(y, x) : less(y, x);
      auto half = g * scalar(0.5);
      auto tie = equal(x, y);
      return {where(x_wins, g, where(tie, half, scalar(0))), where(y_wins, g, where(tie, half, scalar(0)))};
    }
    case opcode::power: {
      // JAX's rules: d/dx = y * x^(y-1) (0 where y == 0); d/dy = log(x) * x^y (x == 0 counts as 1).
      auto& y = in[1];
      auto dx = where(equal(y, scalar(0)), scalar(0), y * power(x, y - scalar(1)));
      auto dy = log(where(equal(x, scalar(0)), scalar(1), x)) * out;
      return {g * dx, g * dy};
    }
    case opcode::select: return {std::nullopt, where(x, g, scalar(0)), where(x, scalar(0), g)};
    default: break; // comparisons
  }
  return std::vector<maybe>(in.size());
}

array broadcast_vjp(const array& g, const array& x) {
  auto r = g.ndim(), xr = x.ndim();
  std::vector<std::int64_t> axes;
  for (std::int64_t d = 0; d < r; ++d) {
    auto i = d - (r - xr);
    if (i < 0 || (x.shape()[static_cast<std::size_t>(i)] == 1 && g.shape()[static_cast<std::size_t>(d)] != 1))
      axes.push_back(d);
  }
  auto summed = axes.empty() ? g : sum(g, axes);
  return summed.shape() == x.shape() ? summed : reshape(summed, x.shape());
}

array dot_like(const array& x, const array& y) { return matmul(x, y); }

std::vector<maybe> collective_vjp(const node& n, const array& g) {
  auto& c = collective_of(n);
  switch (c.kind) {
    case collective_kind::psum: return {psum(g, c.axis_name)};
    case collective_kind::pmean: return {pmean(g, c.axis_name)};
    case collective_kind::ppermute: {
      std::vector<std::pair<int, int>> inverse;
      for (auto [s, d] : c.perm)
        inverse.emplace_back(d, s);
      return {ppermute(g, c.axis_name, inverse)};
    }
    case collective_kind::all_gather: return {psum_scatter(g, c.axis_name, c.axis, c.tiled)};
    case collective_kind::psum_scatter: return {all_gather(g, c.axis_name, c.axis, c.tiled)};
    case collective_kind::axis_index: return {};
    case collective_kind::pmax:
    case collective_kind::pmin: break;
  }
  throw runtime_error(std::string("Differentiation rule for '") + collective_name(c.kind) + "' not implemented");
}

} // namespace

array take_rows(const array& x, const std::vector<std::int64_t>& rows, const sharding_ptr& layout) {
  node n;
  n.kind = node_kind::take;
  n.shape = x.shape();
  n.shape[0] = static_cast<std::int64_t>(rows.size());
  n.type = x.dtype();
  n.layout = layout;
  n.attrs = rows;
  return apply(std::move(n), {x});
}

std::vector<maybe> vjp(const node& n, const std::vector<array>& in, const array& out, const array& g,
                       const std::vector<bool>& wanted) {
  auto want = [&](std::size_t k) { return k >= wanted.size() || wanted[k]; };
  switch (n.kind) {
    case node_kind::elementwise: return elementwise_vjp(n, in, out, g);
    case node_kind::broadcast: return {broadcast_vjp(g, in[0])};
    case node_kind::reshard: return {g};
    case node_kind::transpose: {
      std::vector<std::int64_t> inverse(n.attrs.size());
      for (std::size_t i = 0; i < n.attrs.size(); ++i)
        inverse[static_cast<std::size_t>(n.attrs[i])] = static_cast<std::int64_t>(i);
      return {transpose(g, inverse)};
    }
    case node_kind::reshape: return {reshape(g, in[0].shape())};
    case node_kind::reduce: {
      auto& x = in[0];
      if (!is_floating(x.dtype()))
        return {std::nullopt};
      if (n.op == opcode::reduce_sum)
        return {unreduce(g, n, x)};
      // max/min: the cotangent is shared equally by the elements equal to the result (JAX).
      auto hits = convert(equal(x, unreduce(out, n, x)), x.dtype());
      auto counts = unreduce(sum(hits, n.attrs), n, x);
      return {unreduce(g, n, x) * hits / counts};
    }
    case node_kind::dot: {
      std::vector<maybe> r(2);
      if (want(0))
        r[0] = dot_like(g, transpose(in[1]));
      if (want(1))
        r[1] = dot_like(transpose(in[0]), g);
      return r;
    }
    case node_kind::batch_dot: {
      // Per batch row as for dot; a y shared by every row sums its rows' gradients.
      auto& x = in[0];
      auto& y = in[1];
      std::vector<maybe> r(2);
      if (want(0))
        r[0] = batch_dot(g, y.ndim() == 3 ? transpose(y, {0, 2, 1}) : transpose(y), x.sharding());
      if (want(1)) {
        auto xt = transpose(x, {0, 2, 1});
        r[1] = y.ndim() == 3 ? batch_dot(xt, g, y.sharding()) : sum(batch_dot(xt, g, x.sharding()), {0});
      }
      return r;
    }
    case node_kind::take: {
      std::vector<std::int64_t> inverse(static_cast<std::size_t>(in[0].shape()[0]), -1);
      for (std::size_t i = 0; i < n.attrs.size(); ++i)
        if (n.attrs[i] >= 0)
          inverse[static_cast<std::size_t>(n.attrs[i])] = static_cast<std::int64_t>(i);
      return {take_rows(g, inverse, in[0].sharding())};
    }
    case node_kind::collective: return collective_vjp(n, g);
    case node_kind::input:
    case node_kind::constant:
    case node_kind::random:
    case node_kind::iota: break;
  }
  return std::vector<maybe>(in.size());
}

} // namespace am::detail
