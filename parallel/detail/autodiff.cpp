#include "actormesh/parallel/detail/autodiff.hpp"
#include "actormesh/actors/shape.hpp"

#include "actormesh/actors/errors.hpp"
#include "parallel/detail/vjp_rules.hpp"
#include "sharding/detail/array_state.hpp"
#include "sharding/detail/elementwise.hpp"
#include "actormesh/sharding/ops.hpp"

#include <algorithm>
#include <map>

namespace am::detail {

namespace {

/// A fresh node standing for argument `x`, so that each differentiated argument has its own node
/// even when the same value is passed twice (a reshard to its own sharding lowers to nothing).
array identity_of(const array& x) {
  node n;
  n.kind = node_kind::reshard;
  n.shape = x.shape();
  n.type = x.dtype();
  n.layout = x.sharding();
  return apply(std::move(n), {x});
}

} // namespace

std::vector<array> value_and_grad_traced(const array_function& f, const std::vector<array>& args,
                                         const std::vector<int>& argnums) {
  auto* t = current_trace();
  if (t == nullptr)
    throw runtime_error("internal: value_and_grad_traced needs a trace");
  auto call_args = args;
  std::vector<int> wrt;
  for (int k : argnums) {
    if (k < 0 || k >= static_cast<int>(args.size()))
      throw value_error("argnums " + std::to_string(k) + " is out of range for a function of "
                        + std::to_string(args.size()) + " arguments");
    auto type = args[static_cast<std::size_t>(k)].dtype();
    if (!is_floating(type))
      throw type_error("grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                       "np.inexact), but got " + std::string(am::name(type)) + ". If you want to use Boolean- "
                       "or integer-valued inputs, use vjp or set allow_int to True.");
    call_args[static_cast<std::size_t>(k)] = identity_of(args[static_cast<std::size_t>(k)]);
    wrt.push_back(t->node_of(call_args[static_cast<std::size_t>(k)]));
  }
  auto outputs = f(call_args);
  if (outputs.empty())
    throw type_error("Gradient only defined for scalar-output functions. Output was empty.");
  auto& out = outputs.front();
  if (!out.shape().empty())
    throw type_error("Gradient only defined for scalar-output functions. Output had shape: " + shape_to_string(out.shape())
                     + ".");
  if (!is_floating(out.dtype()))
    throw type_error("grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got "
                     + std::string(am::name(out.dtype())) + ".");
  int out_node = t->node_of(out);
  int lowest = *std::min_element(wrt.begin(), wrt.end());
  std::map<int, array> cts;
  cts.emplace(out_node, filled(1.0, {}, out.dtype(), out.sharding()));
  auto is_wrt = [&](int id) { return std::find(wrt.begin(), wrt.end(), id) != wrt.end(); };
  // Nodes whose value depends on a differentiated argument: only they need cotangents.
  auto& nodes = t->recorded().nodes;
  std::vector<bool> depends(static_cast<std::size_t>(out_node) + 1, false);
  for (int id = lowest; id <= out_node; ++id) {
    bool d = is_wrt(id);
    for (int m : nodes[static_cast<std::size_t>(id)].operands)
      d = d || (m >= lowest && depends[static_cast<std::size_t>(m)]);
    depends[static_cast<std::size_t>(id)] = d;
  }
  for (int id = out_node; id >= lowest; --id) {
    auto it = cts.find(id);
    if (it == cts.end() || is_wrt(id))
      continue;
    node n = t->recorded().nodes[static_cast<std::size_t>(id)]; // a copy: the rules add nodes
    if (n.kind == node_kind::input || n.kind == node_kind::constant || n.kind == node_kind::random
        || n.kind == node_kind::iota)
      continue;
    std::vector<array> operands;
    std::vector<bool> wanted;
    for (int m : n.operands) {
      operands.push_back(tracer_of(*t, m));
      wanted.push_back(m >= lowest && depends[static_cast<std::size_t>(m)]);
    }
    auto ct = it->second;
    auto contributions = vjp(n, operands, tracer_of(*t, id), ct, wanted);
    for (std::size_t k = 0; k < n.operands.size(); ++k) {
      int m = n.operands[k];
      if (!contributions[k] || !wanted[k])
        continue;
      auto found = cts.find(m);
      if (found == cts.end())
        cts.emplace(m, *contributions[k]);
      else
        found->second = add(found->second, *contributions[k]);
    }
  }
  std::vector<array> result{out};
  for (std::size_t k = 0; k < wrt.size(); ++k) {
    auto& arg = call_args[static_cast<std::size_t>(argnums[k])];
    auto it = cts.find(wrt[k]);
    if (it == cts.end())
      result.push_back(filled(0.0, arg.shape(), arg.dtype(), arg.sharding()));
    else
      result.push_back(convert(it->second, arg.dtype()));
  }
  return result;
}

} // namespace am::detail
