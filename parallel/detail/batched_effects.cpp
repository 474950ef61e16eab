#include "parallel/detail/batched_effects.hpp"

#include "actormesh/actors/errors.hpp"
#include "sharding/detail/elementwise.hpp"
#include "sharding/detail/sharding_rules.hpp"

#include <algorithm>
#include <utility>

namespace am::detail {

namespace {

using effect_body = std::function<void(const std::vector<host_array>&)>;

/// `body` run once per example of one device's shards: mapped shards are cut along dim 0.
effect_body per_example(effect_body body, std::vector<bool> mapped) {
  return [body = std::move(body), mapped = std::move(mapped)](const std::vector<host_array>& shards) {
    std::int64_t examples = -1;
    for (std::size_t k = 0; k < shards.size(); ++k) {
      if (!mapped[k])
        continue;
      const std::int64_t here = shards[k].shape().at(0);
      if (examples >= 0 && here != examples)
        throw value_error("am::debug_callback: the mapped values' shards on one device hold " + std::to_string(examples)
                          + " and " + std::to_string(here) + " examples");
      examples = here;
    }
    std::vector<host_array> slice = shards;
    for (std::int64_t i = 0; i < examples; ++i) {
      for (std::size_t k = 0; k < shards.size(); ++k)
        if (mapped[k])
          slice[k] = shards[k][i];
      body(slice);
    }
  };
}

} // namespace

void replay_batched_effects(const traced_function& traced, std::vector<batched>& outs, const effect_layouts& layouts) {
  if (traced.effects.empty())
    return;
  auto* outer = current_trace();
  if (outer == nullptr || !outer->accepts_effects())
    throw value_error("internal: am::debug_callback inside a transformation whose trace takes no effects");
  std::size_t next = outs.size() - traced.effect_outputs;
  const std::size_t own = next;
  for (auto& [body, count] : traced.effects) {
    const auto first = std::find_if(outs.begin() + static_cast<std::ptrdiff_t>(next),
                                    outs.begin() + static_cast<std::ptrdiff_t>(next + count),
                                    [](const batched& b) { return b.mapped; });
    const bool any_mapped = first != outs.begin() + static_cast<std::ptrdiff_t>(next + count);
    sharding_ptr mapped_layout = layouts.mapped;
    if (any_mapped && !mapped_layout)
      mapped_layout = replicated_like(first->value.sharding());
    std::vector<array> values;
    std::vector<bool> mapped;
    for (std::size_t k = 0; k < count; ++k, ++next) {
      auto& v = outs[next];
      const sharding_ptr& layout = v.mapped ? mapped_layout : layouts.unmapped;
      values.push_back(layout ? broadcast_to(v.value, v.value.shape(), layout) : v.value);
      mapped.push_back(v.mapped);
    }
    outer->add_effect(trace_effect{any_mapped ? per_example(body, std::move(mapped)) : body, std::move(values)});
  }
  outs.resize(own);
}

} // namespace am::detail
