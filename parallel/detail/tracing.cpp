#include "actormesh/parallel/detail/tracing.hpp"

#include "actormesh/actors/errors.hpp"
#include "sharding/detail/array_state.hpp"
#include "actormesh/sharding/shape_ops.hpp"

#include <numeric>

namespace am::detail {

array tracer_of(trace_context& t, int id) {
  auto& n = t.recorded().nodes.at(static_cast<std::size_t>(id));
  auto s = std::make_shared<array_state>();
  s->shape = n.shape;
  s->type = n.type;
  s->layout = n.layout;
  s->trace = &t;
  s->node = id;
  return array(std::move(s));
}

array abstract_array(shape_t shape, am::dtype type, sharding_ptr layout) {
  auto s = std::make_shared<array_state>();
  s->shape = std::move(shape);
  s->type = type;
  s->layout = std::move(layout);
  return array(std::move(s));
}

traced_function trace_function(const array_function& fn, const std::vector<array>& args, bool keep_effects) {
  traced_function out;
  trace_context trace(args);
  if (keep_effects)
    trace.accept_effects();
  auto results = fn(trace.tracers());
  auto& g = trace.recorded();
  for (auto& r : results)
    g.outputs.push_back(trace.node_of(r));
  for (auto& effect : trace.effects()) {
    for (auto& v : effect.values)
      g.outputs.push_back(trace.node_of(v));
    out.effects.emplace_back(effect.body, effect.values.size());
    out.effect_outputs += effect.values.size();
  }
  out.g = g;
  out.captured = trace.captured();
  return out;
}

array filled(double value, const shape_t& shape, am::dtype type, const sharding_ptr& layout) {
  node n;
  n.kind = node_kind::constant;
  n.shape = shape;
  n.type = type;
  n.layout = layout;
  n.scalar = value;
  return apply(std::move(n), {});
}

array moveaxis(const array& x, std::int64_t from, std::int64_t to) {
  if (from == to)
    return x;
  std::vector<std::int64_t> perm(static_cast<std::size_t>(x.ndim()));
  std::iota(perm.begin(), perm.end(), 0);
  perm.erase(perm.begin() + from);
  perm.insert(perm.begin() + to, from);
  return transpose(x, perm);
}

} // namespace am::detail
