#include "colocated/detail/pending_outputs.hpp"

#include "actormesh/actors/errors.hpp"
#include "sharding/detail/addressable.hpp"
#include "sharding/detail/array_state.hpp"

#include <map>
#include <tuple>

namespace am::detail {

namespace {

/// This thread's last few answers of a pure function of shardings, keyed by the shardings' identity
/// (held, so an address is never reused while it is a key): a caller repeating calls asks the same.
template <class Key, class Value, std::size_t Size = 8>
class recent_answers {
public:
  template <class Compute>
  const Value& get(const Key& key, Compute&& compute) {
    for (auto& [k, v] : entries_)
      if (k == key)
        return v;
    if (entries_.size() == Size)
      entries_.erase(entries_.begin());
    entries_.emplace_back(key, compute());
    return entries_.back().second;
  }

private:
  std::vector<std::pair<Key, Value>> entries_;
};

/// The placements of arrays of `shape` under `s` (a pure function of both).
const std::vector<shard_placement>& placements_of(const sharding_ptr& s, const shape_t& shape) {
  thread_local recent_answers<std::pair<sharding_ptr, shape_t>, std::vector<shard_placement>> recent;
  return recent.get({s, shape}, [&] { return s->shard_placements(shape); });
}

/// Whether `a` lays arrays of rank `ndim` out as `b` does (a pure function of the three).
bool same_layout(const sharding_ptr& a, const sharding_ptr& b, std::size_t ndim) {
  if (!a || !b)
    return false;
  if (a == b)
    return true;
  thread_local recent_answers<std::tuple<sharding_ptr, sharding_ptr, std::size_t>, bool> recent;
  return recent.get({a, b, ndim}, [&] { return a->is_equivalent_to(*b, ndim); });
}

} // namespace

std::pair<std::vector<array>, pending_outputs> pending_outputs::make(const spec_tree& specs) {
  std::pair<std::vector<array>, pending_outputs> out;
  auto& [arrays, pending] = out;
  pending.specs_ = specs;
  for (auto& spec : specs.leaves()) {
    if (!spec.sharding)
      throw value_error("colocated_python: an output spec has no sharding: " + spec.to_string());
    output_shards promised;
    std::vector<shard> shards;
    for (auto& pl : placements_of(spec.sharding, spec.shape)) {
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
    if (got.shape != want.shape || got.dtype != want.dtype || !same_layout(got.sharding, want.sharding, want.shape.size()))
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
