#include "parallel/detail/batching.hpp"

#include "actormesh/actors/errors.hpp"
#include "parallel/detail/batch_dot.hpp"
#include "parallel/detail/batching_collectives.hpp"
#include "parallel/detail/vjp_rules.hpp"
#include "sharding/detail/elementwise.hpp"
#include "sharding/detail/sharding_rules.hpp"
#include "actormesh/sharding/ops.hpp"
#include "actormesh/sharding/reductions.hpp"
#include "actormesh/sharding/shape_ops.hpp"

#include <optional>

namespace am::detail {

namespace {

shape_t with_batch(std::int64_t size, const shape_t& s) {
  shape_t out{size};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

/// Re-applies a node that the mapped axis does not reach, on (unmapped) operands.
array reapply(node n, const std::vector<array>& operands) {
  return apply(std::move(n), operands);
}

array elementwise(const node& n, const std::vector<array>& in) {
  if (n.op == opcode::convert)
    return convert(in[0], n.type);
  if (n.op == opcode::select)
    return select(in[0], operand(in[1]), operand(in[2]));
  if (in.size() == 1)
    return unary(n.op, in[0]);
  return binary(n.op, operand(in[0]), operand(in[1]));
}

array reduce(const node& n, const array& x, std::vector<std::int64_t> axes) {
  if (n.op == opcode::reduce_sum)
    return convert(sum(x, std::move(axes)), n.type);
  if (n.op == opcode::reduce_max)
    return max(x, std::move(axes));
  return min(x, std::move(axes));
}

/// x @ y with dim 0 of the mapped ones being the axis: one product per example (batch_dot).
array batched_dot(const batched& x, const batched& y, const batch_axis& axis) {
  auto xm = as_mapped(x, axis); // [B, m, k]
  return batch_dot(xm, y.value, mapped_layout(axis, xm));
}

/// A batch_dot (from an inner vmap) with the mapped axis in front of its batch dim: x [B, b, m, k]
/// with a 2-D y per example is one batch_dot over B of [b * m, k] rows; else a contraction.
array batched_batch_dot(const batched& x, const batched& y, const batch_axis& axis) {
  auto xm = as_mapped(x, axis);
  auto layout = mapped_layout(axis, xm);
  auto& s = xm.shape();
  auto per_example_y = y.value.ndim() - (y.mapped ? 1 : 0);
  if (per_example_y == 2) {
    auto rows = reshape(xm, {s[0], s[1] * s[2], s[3]});
    return reshape(batch_dot(rows, y.value, layout), {s[0], s[1], s[2], y.value.shape().back()});
  }
  return contract(xm, as_mapped(y, axis), layout);
}

batched replay(const node& n, const std::vector<batched>& in, const batch_axis& axis) {
  bool any = false;
  std::vector<array> values;
  for (auto& b : in) {
    any = any || b.mapped;
    values.push_back(b.value);
  }
  if (n.kind == node_kind::collective)
    return batch_collective(n, in, axis);
  if (!any) {
    if (n.kind == node_kind::reshard)
      return {values[0], false};
    return {reapply(n, values), false};
  }
  auto& x = in[0];
  auto B = axis.size;
  switch (n.kind) {
    case node_kind::elementwise: {
      // Unmapped operands broadcast against the mapped dim by numpy's rule (they lack dim 0).
      return {elementwise(n, values), true};
    }
    case node_kind::broadcast: {
      auto& from = x.value.shape();
      auto rank = static_cast<std::size_t>(n.shape.size());
      shape_t padded{B};
      padded.insert(padded.end(), rank - (from.size() - 1), 1);
      padded.insert(padded.end(), from.begin() + 1, from.end());
      auto target = with_batch(B, n.shape);
      return {broadcast_to(reshape(x.value, padded), target, mapped_layout(axis, x.value)), true};
    }
    case node_kind::reshard: return x;
    case node_kind::transpose: {
      std::vector<std::int64_t> perm{0};
      for (auto p : n.attrs)
        perm.push_back(p + 1);
      return {transpose(x.value, perm), true};
    }
    case node_kind::reshape: return {reshape(x.value, with_batch(B, n.shape)), true};
    case node_kind::reduce: {
      std::vector<std::int64_t> axes;
      for (auto a : n.attrs)
        axes.push_back(a + 1);
      return {reduce(n, x.value, axes), true};
    }
    case node_kind::dot: return {batched_dot(in[0], in[1], axis), true};
    case node_kind::batch_dot: return {batched_batch_dot(in[0], in[1], axis), true};
    case node_kind::take: {
      std::vector<std::int64_t> rows;
      for (auto r : n.attrs)
        rows.push_back(r);
      // per-example rows become rows of dim 1: move it to the front and back again
      auto moved = moveaxis(x.value, 1, 0);
      return {moveaxis(take_rows(moved, rows, replicated_like(moved.sharding())), 0, 1), true};
    }
    case node_kind::input:
    case node_kind::constant:
    case node_kind::random:
    case node_kind::iota:
    case node_kind::collective: break;
  }
  throw runtime_error("internal: a node without operands was mapped");
}

} // namespace

sharding_ptr mapped_layout(const batch_axis& axis, const array& like) {
  return axis.mapped_layout ? axis.mapped_layout : replicated_like(like.sharding());
}

array as_mapped(const batched& b, const batch_axis& axis) {
  if (b.mapped)
    return b.value;
  auto shape = with_batch(axis.size, b.value.shape());
  shape_t one = b.value.shape();
  one.insert(one.begin(), 1);
  return broadcast_to(reshape(b.value, one), shape, mapped_layout(axis, b.value));
}

std::vector<batched> batch_nodes(const traced_function& fn, const std::vector<std::pair<int, batched>>& known,
                                 const std::vector<int>& wanted, const batch_axis& axis) {
  auto& g = fn.g;
  std::vector<std::optional<batched>> values(g.nodes.size());
  for (std::size_t k = 0; k < g.inputs.size(); ++k) {
    auto captured = static_cast<std::ptrdiff_t>(k) - static_cast<std::ptrdiff_t>(g.inputs.size() - fn.captured.size());
    if (captured >= 0)
      values[static_cast<std::size_t>(g.inputs[k])] = batched{fn.captured.at(static_cast<std::size_t>(captured)), false};
  }
  for (auto& [id, v] : known)
    values.at(static_cast<std::size_t>(id)) = v;
  // What the wanted nodes reach without going through a value already there.
  std::vector<char> needed(g.nodes.size(), 0);
  for (int w : wanted)
    needed.at(static_cast<std::size_t>(w)) = 1;
  for (std::size_t i = g.nodes.size(); i-- > 0;)
    if (needed[i] && !values[i])
      for (int m : g.nodes[i].operands)
        needed[static_cast<std::size_t>(m)] = 1;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (!needed[i] || values[i])
      continue;
    auto& n = g.nodes[i];
    if (n.kind == node_kind::input)
      throw runtime_error("internal: a replay needs input node " + std::to_string(i) + " it was not given");
    std::vector<batched> in;
    for (int m : n.operands)
      in.push_back(*values[static_cast<std::size_t>(m)]);
    values[i] = replay(n, in, axis);
  }
  std::vector<batched> out;
  for (int w : wanted)
    out.push_back(*values[static_cast<std::size_t>(w)]);
  return out;
}

std::vector<batched> batch_function(const traced_function& fn, const std::vector<batched>& args,
                                    const batch_axis& axis) {
  std::vector<std::pair<int, batched>> known;
  for (std::size_t k = 0; k < args.size(); ++k)
    known.emplace_back(fn.g.inputs.at(k), args[k]);
  return batch_nodes(fn, known, fn.g.outputs, axis);
}

} // namespace am::detail
