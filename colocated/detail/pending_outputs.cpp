#include "colocated/detail/pending_outputs.hpp"

#include "actors/errors.hpp"
#include "sharding/detail/addressable.hpp"
#include "sharding/detail/array_state.hpp"

#include <map>

namespace am::detail {

std::pair<std::vector<array>, pending_outputs> pending_outputs::make(const spec_tree& specs) {
  std::pair<std::vector<array>, pending_outputs> out;
  auto& [arrays, pending] = out;
  pending.specs_ = specs;
  for (auto& spec : specs.leaves()) {
    if (!spec.sharding)
      throw value_error("colocated_python: an output spec has no sharding: " + spec.to_string());
    output_shards promised;
    std::vector<shard> shards;
    for (auto& pl : spec.sharding->shard_placements(spec.shape)) {
      if (!is_addressable(pl.device))
        continue;
      promise<buffer_ref> p;
      shards.push_back(shard{pl.device, pl.index, pl.replica_id, p.get_future()});
      promised.shards.emplace_back(pl.device, std::move(p));
    }
    auto st = std::make_shared<array_state>();
    st->shape = spec.shape;
    st->type = spec.dtype;
    st->layout = spec.sharding;
    st->set_shards(std::move(shards));
    arrays.emplace_back(std::move(st));
    pending.outputs_.push_back(std::move(promised));
  }
  return out;
}

void check_results_match(const spec_tree& specs, const flat_tree& results) {
  if (results.def != specs.def())
    throw value_error("colocated_python: the function returned " + results.def.to_string()
                      + " but its output specs are " + specs.def().to_string());
  for (std::size_t k = 0; k < results.leaves.size(); ++k) {
    auto got = shape_dtype_struct::of(results.leaves[k]);
    auto& want = specs.leaves()[k];
    bool same_layout = got.sharding && want.sharding
                       && (got.sharding == want.sharding || got.sharding->is_equivalent_to(*want.sharding, want.shape.size()));
    if (got.shape != want.shape || got.dtype != want.dtype || !same_layout)
      throw value_error("colocated_python: output " + std::to_string(k) + " is " + got.to_string()
                        + " but its output spec is " + want.to_string());
  }
}

void pending_outputs::resolve(const flat_tree& results) const {
  try {
    check_results_match(specs_, results);
  } catch (...) {
    fail(std::current_exception());
    return;
  }
  for (std::size_t k = 0; k < outputs_.size(); ++k) {
    std::map<int, shard_future> by_device;
    for (auto& s : results.leaves[k].addressable_shards())
      by_device.emplace(s.device.id, s.data);
    for (auto& [dev, p] : outputs_[k].shards) {
      auto it = by_device.find(dev.id);
      if (it == by_device.end()) {
        p.set_error(std::make_exception_ptr(
          value_error("colocated_python: output " + std::to_string(k) + " has no shard on " + to_string(dev))));
        continue;
      }
      auto source = it->second;
      source.on_ready([source, p] {
        if (auto e = source.shared_state()->error())
          p.set_error(e);
        else
          p.set_value(source.get());
      });
    }
  }
}

void pending_outputs::fail(const std::exception_ptr& error) const {
  for (auto& out : outputs_)
    for (auto& [dev, p] : out.shards)
      p.set_error(error);
}

} // namespace am::detail
