#include "parallel/detail/batching_collectives.hpp"

#include "actormesh/actors/errors.hpp"
#include "parallel/detail/collective_node.hpp"
#include "parallel/detail/vjp_rules.hpp"
#include "sharding/detail/elementwise.hpp"
#include "sharding/detail/sharding_rules.hpp"
#include "actormesh/sharding/detail/trace.hpp"
#include "actormesh/sharding/ops.hpp"
#include "actormesh/sharding/reductions.hpp"
#include "actormesh/sharding/shape_ops.hpp"

namespace am::detail {

namespace {

/// The sum over dim 0 of mapped `v`, kept in `v`'s dtype (sum widens small integers).
array sum0(const array& v) { return convert(sum(v, {0}), v.dtype()); }

/// Reduces dim 0 of `v` with the result laid out by `layout`: with a layout sharded along the new
/// dim 0, each device receives only its block of every partial sum (a reduce-scatter).
array reduce0_into(const array& v, const sharding_ptr& layout) {
  node n;
  n.kind = node_kind::reduce;
  n.op = opcode::reduce_sum;
  n.shape.assign(v.shape().begin() + 1, v.shape().end());
  n.type = v.dtype();
  n.layout = layout ? layout : reduced(v.sharding(), v.shape().size(), {0});
  n.attrs = {0};
  return apply(std::move(n), {v});
}

/// `x` (the same on every device) laid out so that every device holds all of it.
array everywhere(const array& x) {
  auto r = replicated_like(x.sharding());
  return broadcast_to(x, x.shape(), r);
}

/// The sum over dim 0 of mapped `v` on every device. Under pmap, when each slice splits evenly
/// over the devices, as a reduce-scatter then an all-gather: device i sums only block i of every
/// slice, and the blocks are then gathered everywhere (each device reads 2 slices' worth of bytes
/// instead of all B slices).
array all_reduce_sum(const array& v, const batch_axis& axis) {
  auto B = axis.size;
  shape_t slice(v.shape().begin() + 1, v.shape().end());
  std::int64_t total = 1;
  for (auto e : slice)
    total *= e;
  if (!axis.mapped_layout || B < 2 || total % B != 0 || total < B * 1024)
    return sum0(v);
  auto blocks = reduce0_into(reshape(v, {B, B, total / B}), axis.mapped_layout); // [B(dst), total / B]
  return reshape(everywhere(blocks), slice);
}

batched own_axis(const collective& c, const std::vector<batched>& in, const batch_axis& axis) {
  auto B = axis.size;
  if (c.kind == collective_kind::axis_index) {
    node n;
    n.kind = node_kind::iota;
    n.shape = {B};
    n.type = am::dtype::int32;
    n.layout = axis.fresh_layout;
    return {apply(std::move(n), {}), true};
  }
  auto& x = in[0];
  switch (c.kind) {
    case collective_kind::psum:
      if (!x.mapped)
        return {convert(x.value * scalar(static_cast<double>(B)), x.value.dtype()), false};
      return {all_reduce_sum(x.value, axis), false};
    case collective_kind::pmean:
      if (!x.mapped)
        return x;
      if (is_floating(x.value.dtype()))
        return {convert(all_reduce_sum(x.value, axis) / scalar(static_cast<double>(B)), x.value.dtype()), false};
      return {convert(sum(x.value, {0}) / scalar(static_cast<double>(B)), x.value.dtype()), false};
    case collective_kind::pmax:
      return x.mapped ? batched{max(x.value, {0}), false} : x;
    case collective_kind::pmin:
      return x.mapped ? batched{min(x.value, {0}), false} : x;
    case collective_kind::all_gather: {
      // The stacked slices are the gathered value; every device gets all of them.
      auto stacked = everywhere(as_mapped(x, axis));
      auto moved = moveaxis(stacked, 0, c.axis);
      if (!c.tiled)
        return {moved, false};
      auto shape = x.mapped ? shape_t(x.value.shape().begin() + 1, x.value.shape().end()) : x.value.shape();
      shape[static_cast<std::size_t>(c.axis)] *= B;
      return {reshape(moved, shape), false};
    }
    case collective_kind::ppermute: {
      std::vector<std::int64_t> rows(static_cast<std::size_t>(B), -1);
      for (auto [s, d] : c.perm)
        rows[static_cast<std::size_t>(d)] = s;
      auto v = as_mapped(x, axis);
      return {take_rows(v, rows, mapped_layout(axis, v)), true};
    }
    case collective_kind::psum_scatter: {
      auto v = as_mapped(x, axis); // [B(src), ..., S[d], ...]
      auto d = c.axis + 1;
      auto front = moveaxis(v, d, 1); // [B(src), S[d], rest...]
      if (c.tiled) {
        auto shape = front.shape();
        auto k = shape[1] / B;
        shape[1] = k;
        shape.insert(shape.begin() + 1, B); // [B(src), B(dst), k, rest...]
        auto summed = reduce0_into(reshape(front, shape), axis.mapped_layout); // [B(dst), k, rest...]
        return {moveaxis(summed, 1, d), true};
      }
      return {reduce0_into(front, axis.mapped_layout), true}; // [B(dst), rest...]
    }
    case collective_kind::axis_index: break;
  }
  throw runtime_error("internal: unknown collective");
}

/// A collective over an enclosing axis, on a value mapped along this replay's axis: recorded again
/// on the whole mapped value, its dims shifted past dim 0.
batched other_axis(const collective& c, const std::vector<batched>& in) {
  if (c.kind == collective_kind::axis_index)
    return {call_collective(c, array(), 0), false};
  auto& x = in[0];
  if (!x.mapped)
    return {call_collective(c, x.value, c.axis), false};
  switch (c.kind) {
    case collective_kind::psum:
    case collective_kind::pmean:
    case collective_kind::pmax:
    case collective_kind::pmin:
    case collective_kind::ppermute:
    case collective_kind::psum_scatter: return {call_collective(c, x.value, c.axis + 1), true};
    case collective_kind::all_gather: return {call_collective(c, x.value, c.axis + 1), true};
    case collective_kind::axis_index: break;
  }
  throw runtime_error("internal: unknown collective");
}

} // namespace

batched batch_collective(const node& n, const std::vector<batched>& in, const batch_axis& axis) {
  auto& c = collective_of(n);
  if (!axis.name.empty() && c.axis_name == axis.name)
    return own_axis(c, in, axis);
  return other_axis(c, in);
}

} // namespace am::detail
