#include "actormesh/sharding/array.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/calls.hpp"
#include "actormesh/devices/runtime.hpp"
#include "sharding/detail/addressable.hpp"
#include "sharding/detail/array_state.hpp"
#include "sharding/detail/block_copy.hpp"
#include "actormesh/sharding/detail/graph.hpp"
#include "actormesh/sharding/detail/trace.hpp"
#include "actormesh/sharding/single_device_sharding.hpp"

#include <algorithm>
#include <unordered_map>
#include <cstring>

namespace am {

const detail::array_state& array::checked() const {
  if (!state_)
    throw value_error("Use of an empty am::array");
  return *state_;
}

const shape_t& array::shape() const {
  return checked().shape;
}

am::dtype array::dtype() const {
  return checked().type;
}

const sharding_ptr& array::sharding() const {
  return checked().layout;
}

std::vector<shard> array::addressable_shards() const {
  auto all = detail::concrete_state(*this).shards();
  std::vector<shard> mine;
  mine.reserve(all->size());
  for (auto& s : *all)
    if (detail::is_addressable(s.device))
      mine.push_back(s);
  // In the sharding's device order (a mesh's devices as laid out), as JAX lists them.
  std::unordered_map<int, std::size_t> position; // device id -> its place in the sharding
  const auto& order = sharding()->device_assignment();
  for (std::size_t i = 0; i < order.size(); ++i)
    position.emplace(order[i].id, i);
  std::stable_sort(mine.begin(), mine.end(),
                   [&](const shard& a, const shard& b) { return position[a.device.id] < position[b.device.id]; });
  return mine;
}

bool array::is_fully_addressable() const {
  if (detail::drives_every_device()) // the controller of a single-controller cluster
    return true;
  return sharding()->is_fully_addressable(process_index());
}

void array::block_until_ready() const {
  auto shards = detail::concrete_state(*this).shards();
  for (auto& s : *shards)
    if (detail::is_addressable(s.device))
      s.data.get();
}

void array::block_until_ready(std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto shards = detail::concrete_state(*this).shards();
  for (auto& s : *shards) {
    if (!detail::is_addressable(s.device))
      continue;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() < 0)
      left = std::chrono::milliseconds(0);
    if (!s.data.wait_for(left))
      throw timeout_error("Timed out after " + std::to_string(timeout.count()) + " ms waiting for "
                          + to_string() + " to be ready");
    s.data.get();
  }
}

namespace {

/// True when every block of the array has a replica on this process's devices (a fully
/// addressable or a fully replicated array): then to_host() needs nothing from other processes.
bool has_every_block_here(const std::vector<shard>& shards) {
  for (auto& s : shards) {
    if (s.replica_id != 0)
      continue;
    bool here = false;
    for (auto& r : shards)
      here = here || (r.index == s.index && detail::is_addressable(r.device));
    if (!here)
      return false;
  }
  return true;
}

} // namespace

host_array array::to_host() const {
  auto& st = detail::concrete_state(*this);
  auto shards = st.shards();
  if (!has_every_block_here(*shards))
    throw runtime_error("Fetching value for `jax.Array` that spans non-addressable (non process local) devices is "
                        "not possible. You can use `jax.experimental.multihost_utils.process_allgather` to print "
                        "the global array or use `.addressable_shards` method of jax.Array to inspect the "
                        "addressable (process local) shards.");
  auto out = host_array::empty(st.shape, st.type);
  std::vector<std::pair<const shard*, future<std::vector<std::byte>>>> pending;
  // One addressable replica of each block (the first one, replica 0, in local mode).
  for (auto& s : *shards) {
    if (!detail::is_addressable(s.device))
      continue;
    bool first_here = true;
    for (auto& other : pending)
      first_here = first_here && !(other.first->index == s.index);
    if (first_here)
      pending.emplace_back(&s, fetch(s.device, s.data));
  }
  for (auto& [s, bytes] : pending)
    detail::copy_block_in(out, s->index, bytes.get());
  return out;
}

void array::delete_() {
  detail::concrete_state(*this, /*allow_deleted=*/true);
  // Calls already issued hold their inputs: they finish with the values. Uses from now on throw.
  // Deleting twice (also from two threads at once) is a no-op, as in JAX.
  state_->delete_shards();
}

bool array::is_deleted() const {
  return checked().deleted();
}

bool array::is_tracer() const {
  return checked().node >= 0;
}

std::string array::aval_string() const {
  auto& st = checked();
  return detail::aval_text(st.type, st.shape);
}

std::string array::to_string() const {
  auto& st = checked();
  return "Array(" + aval_string() + ", sharding=" + (st.layout ? st.layout->to_string() : "?") + ")";
}

array device_put(const host_array& data, const sharding_ptr& s) {
  if (!s)
    throw value_error("device_put: no sharding given");
  if (detail::current_trace() != nullptr)
    throw value_error("device_put of host data inside jit is not supported: pass the array as an argument");
  auto st = std::make_shared<detail::array_state>();
  st->shape = data.shape();
  st->type = data.dtype();
  st->layout = s;
  std::vector<shard> shards;
  for (auto& pl : s->shard_placements(data.shape())) {
    if (!detail::is_addressable(pl.device)) { // multi-controller: that process puts its own part
      shards.push_back({pl.device, pl.index, pl.replica_id, detail::remote_shard(pl.device)});
      continue;
    }
    auto bytes = detail::copy_block_out(data, pl.index);
    auto fut = upload(pl.device, std::move(bytes), {data.dtype(), detail::extents(pl.index)});
    shards.push_back({pl.device, pl.index, pl.replica_id, std::move(fut)});
  }
  st->set_shards(std::move(shards));
  return array(std::move(st));
}

namespace {

/// Throws am::value_error, `what` naming the caller, unless shard `s` is on this process's devices.
void check_addressable(const shard& s, const char* what) {
  if (!detail::is_addressable(s.device))
    throw value_error(std::string(what) + ": the shard on " + am::to_string(s.device)
                      + " is not addressable from process " + std::to_string(process_index()));
}

/// The single-device array of shard `s` (addressable), its elements of type `type`.
array single_shard_array(const shard& s, am::dtype type) {
  auto st = std::make_shared<detail::array_state>();
  st->shape = detail::extents(s.index);
  st->type = type;
  st->layout = make_single_device_sharding(s.device);
  shard_index whole;
  for (auto n : st->shape)
    whole.push_back({0, n});
  st->set_shards({shard{s.device, whole, 0, s.data}});
  return array(std::move(st));
}

} // namespace

array shard_data(const array& x, const shard& s) {
  auto& from = detail::concrete_state(x);
  check_addressable(s, "shard_data");
  return single_shard_array(s, from.type);
}

host_array shard::to_host() const {
  check_addressable(*this, "shard.to_host");
  const auto type = data.get()->dtype(); // waits for the device; rethrows its error
  return single_shard_array(*this, type).to_host();
}

bool is_same(const array& a, const array& b) noexcept {
  return a.state() == b.state();
}

array device_put(const host_array& data, const device& d) {
  return device_put(data, make_single_device_sharding(d));
}

array device_put(const host_array& data) { return device_put(data, default_device()); }

array device_put(const array& x, const sharding_ptr& s) {
  if (!s)
    throw value_error("device_put: no sharding given");
  if (s == x.sharding())
    return x;
  if (!x.is_tracer() && s->is_equivalent_to(*x.sharding(), x.shape().size())) {
    // Same block on every device: a new array with the requested sharding shares the buffers (a
    // traced value has none yet: its reshard node below moves nothing).
    auto& from = detail::concrete_state(x);
    auto from_shards = from.shards();
    auto st = std::make_shared<detail::array_state>();
    st->shape = from.shape;
    st->type = from.type;
    st->layout = s;
    std::vector<shard> shards;
    for (auto& pl : s->shard_placements(from.shape))
      for (auto& sh : *from_shards)
        if (sh.device.id == pl.device.id) {
          shards.push_back({pl.device, pl.index, pl.replica_id, sh.data});
          break;
        }
    st->set_shards(std::move(shards));
    return array(std::move(st));
  }
  s->check_compatible(x.shape());
  detail::node n;
  n.kind = detail::node_kind::reshard;
  n.shape = x.shape();
  n.type = x.dtype();
  n.layout = s;
  return detail::apply(std::move(n), {x});
}

array device_put(const array& x, const device& d) {
  return device_put(x, make_single_device_sharding(d));
}

std::string visualize_array_sharding(const array& x, const visualize_options& options) {
  return visualize_array_sharding(x.shape(), *x.sharding(), options);
}

} // namespace am
