#include "actormesh/parallel/detail/vmap_impl.hpp"

#include "parallel/detail/axis_env.hpp"
#include "parallel/detail/batched_effects.hpp"
#include "parallel/detail/batching.hpp"
#include "parallel/detail/mapping.hpp"
#include "sharding/detail/sharding_rules.hpp"
#include "actormesh/sharding/named_sharding.hpp"

namespace am::detail {

namespace {

/// The layout of mapped values when the batch (dim 0 of `x`) is split over mesh axes: the same
/// split of dim 0 for every mapped value, so the batch stays where it is; else none (derived).
sharding_ptr batch_layout(const array& x) {
  auto* named = dynamic_cast<const named_sharding*>(x.sharding().get());
  if (named == nullptr || named->spec().empty() || named->spec()[0].is_none())
    return nullptr;
  return make_named_sharding(named->mesh(), partition_spec{named->spec()[0]});
}

} // namespace

std::vector<array> vmap_traced(const array_function& f, const std::vector<array>& args, const axis_specs& in_specs,
                               const axis_specs& out_specs, const std::string& axis_name) {
  auto in_axes = normalize_in_axes(match_axes(in_specs, args.size(), "vmap", "in_axes"), args, "vmap");
  auto size = mapped_size(in_axes, args, "vmap");
  std::vector<array> examples;
  std::vector<batched> inputs;
  sharding_ptr fresh, split;
  for (std::size_t k = 0; k < args.size(); ++k) {
    auto& x = args[k];
    auto layout = replicated_like(x.sharding());
    if (!in_axes[k].mapped()) {
      examples.push_back(abstract_array(x.shape(), x.dtype(), layout));
      inputs.push_back({x, false});
      continue;
    }
    auto a = *in_axes[k].axis;
    auto shape = x.shape();
    shape.erase(shape.begin() + a);
    examples.push_back(abstract_array(shape, x.dtype(), layout));
    inputs.push_back({moveaxis(x, a, 0), true});
    if (!fresh) {
      fresh = layout;
      split = batch_layout(inputs.back().value);
    }
  }
  traced_function traced;
  {
    axis_scope scope({axis_name, size, fresh});
    auto* outer = current_trace();
    traced = trace_function(f, examples, /*keep_effects=*/outer != nullptr && outer->accepts_effects());
  }
  batch_axis axis{axis_name, size, split, split ? split : fresh};
  auto outs = batch_function(traced, inputs, axis);
  replay_batched_effects(traced, outs, {split, nullptr}); // once per example, in order
  auto out_axes = match_axes(out_specs, outs.size(), "vmap", "out_axes");
  std::vector<array> result;
  for (std::size_t k = 0; k < outs.size(); ++k)
    result.push_back(place_output(outs[k], out_axes[k], axis, "vmap"));
  return result;
}

} // namespace am::detail
