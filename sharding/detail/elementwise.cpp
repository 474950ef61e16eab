#include "sharding/detail/elementwise.hpp"

#include "actormesh/actors/dtype_promotion.hpp"
#include "actormesh/actors/errors.hpp"
#include "sharding/detail/array_state.hpp"
#include "actormesh/sharding/detail/graph.hpp"
#include "sharding/detail/sharding_rules.hpp"
#include "actormesh/sharding/detail/trace.hpp"

namespace am::detail {

namespace {

scalar_kind kind_of(const scalar& s) {
  return s.is_bool ? scalar_kind::boolean : s.is_integer ? scalar_kind::integer : scalar_kind::floating;
}

/// The dtype of a scalar on its own (when every operand is a scalar): numpy's defaults.
am::dtype default_dtype(const scalar& s) {
  return s.is_bool ? am::dtype::bool_ : s.is_integer ? am::dtype::int64 : am::dtype::float64;
}

/// The result dtype of combining operands (arrays promote among themselves, scalars are weak).
am::dtype common_dtype(const std::vector<const operand*>& ops) {
  std::optional<am::dtype> t;
  for (auto* o : ops)
    if (o->value)
      t = t ? promote_types(*t, o->value->dtype(), array_promotion_rule()) : o->value->dtype();
  if (!t)
    return default_dtype(*ops.front()->constant);
  for (auto* o : ops)
    if (o->constant) {
      if (o->constant->is_integer && is_integer(*t))
        check_integer_scalar(*t, static_cast<std::int64_t>(o->constant->value));
      t = promote_with_scalar(*t, kind_of(*o->constant));
    }
  return *t;
}

/// numpy's broadcast shape of the array operands.
shape_t common_shape(const std::vector<const operand*>& ops) {
  std::optional<shape_t> s;
  for (auto* o : ops)
    if (o->value)
      s = s ? host_array::broadcast_shapes(*s, o->value->shape()) : o->value->shape();
  return s ? *s : shape_t{};
}

/// The result's sharding: the first full-shape operand that is not fully replicated, else the
/// first full-shape operand, else a replicated version of the first array operand's.
sharding_ptr common_layout(const std::vector<const operand*>& ops, const shape_t& shape) {
  const array* first_full = nullptr;
  for (auto* o : ops)
    if (o->value && o->value->shape() == shape) {
      if (!o->value->sharding()->is_fully_replicated())
        return o->value->sharding();
      if (first_full == nullptr)
        first_full = &*o->value;
    }
  if (first_full != nullptr)
    return first_full->sharding();
  for (auto* o : ops)
    if (o->value)
      return replicated_like(o->value->sharding());
  throw value_error("an operation needs at least one array operand");
}

/// The operand as an array of `type`, `shape` and `layout`.
array prepare(const operand& o, am::dtype type, const shape_t& shape, const sharding_ptr& layout) {
  if (o.constant) {
    auto s = std::make_shared<array_state>();
    s->shape = shape;
    s->type = type;
    s->layout = layout;
    s->lazy_constant = o.constant->value;
    return array(std::move(s));
  }
  return broadcast_to(convert(*o.value, type), shape, layout);
}

array elementwise(opcode op, const std::vector<array>& operands, am::dtype result, const sharding_ptr& layout) {
  node n;
  n.kind = node_kind::elementwise;
  n.op = op;
  n.shape = operands.front().shape();
  n.type = result;
  n.layout = layout;
  return apply(std::move(n), operands);
}

} // namespace

array convert(const array& x, am::dtype type) {
  if (x.dtype() == type)
    return x;
  node n;
  n.kind = node_kind::elementwise;
  n.op = opcode::convert;
  n.shape = x.shape();
  n.type = type;
  n.layout = x.sharding();
  return apply(std::move(n), {x});
}

array broadcast_to(const array& x, const shape_t& shape, const sharding_ptr& layout) {
  if (x.shape() == shape && (x.sharding() == layout || x.sharding()->is_equivalent_to(*layout, shape.size())))
    return x;
  layout->check_compatible(shape);
  node n;
  n.kind = node_kind::broadcast;
  n.shape = shape;
  n.type = x.dtype();
  n.layout = layout;
  return apply(std::move(n), {x});
}

array unary(opcode op, const array& x) {
  return elementwise(op, {x}, x.dtype(), x.sharding());
}

array unary_float(opcode op, const array& x) {
  auto t = inexact_dtype(x.dtype(), array_promotion_rule());
  return elementwise(op, {convert(x, t)}, t, x.sharding());
}

array binary(opcode op, const operand& x, const operand& y) {
  std::vector<const operand*> ops{&x, &y};
  auto compute = common_dtype(ops);
  if (op == opcode::divide)
    compute = true_divide_dtype(compute, array_promotion_rule());
  if (op == opcode::floor_divide && compute == am::dtype::bool_)
    compute = am::dtype::int32; // jnp.floor_divide takes bools as int32 (numpy's int8 is not here)
  auto shape = common_shape(ops);
  auto layout = common_layout(ops, shape);
  auto a = prepare(x, compute, shape, layout);
  auto b = prepare(y, compute, shape, layout);
  return elementwise(op, {a, b}, is_comparison(op) ? am::dtype::bool_ : compute, layout);
}

array select(const array& cond, const operand& x, const operand& y) {
  operand c(cond);
  std::vector<const operand*> branches{&x, &y};
  auto compute = common_dtype(branches);
  std::vector<const operand*> all{&c, &x, &y};
  auto shape = common_shape(all);
  auto layout = common_layout(all, shape);
  auto p = broadcast_to(convert(cond, am::dtype::bool_), shape, layout);
  auto a = prepare(x, compute, shape, layout);
  auto b = prepare(y, compute, shape, layout);
  return elementwise(opcode::select, {p, a, b}, compute, layout);
}

} // namespace am::detail
