/// Colocated calls whose devices are a worker's (single-controller mode; doc/colocated.md "In
/// worker processes"): the controller's side sends each worker of the call's devices a host call
/// (devices/remote/host_services.hpp, service `colocated_service`) naming what to run, the specs
/// and the input shards by handle; the worker's side (worker_service.cpp) runs it in the host lane
/// of the calling controller thread there, over the host-local part of the inputs, exactly as a
/// local call runs. Each controller thread's calls keep their order on the worker, since they go
/// over one connection into that thread's lane. Internal.
#pragma once

#include "actormesh/actors/future.hpp"
#include "actormesh/colocated/detail/flat_tree.hpp"
#include "actormesh/colocated/detail/host_side.hpp"
#include "actormesh/colocated/specs.hpp"
#include "sharding/detail/array_state.hpp"

#include <cstdint>
#include <set>
#include <vector>

namespace am::detail {

/// The host service colocated calls travel under.
inline constexpr const char* colocated_service = "am.colocated";

/// True when a call on `devices` runs in worker processes: on the controller of a single-controller
/// cluster, when they are workers' devices. Throws am::value_error when they mix the controller's
/// own devices with workers' (a call runs either here or in workers).
bool runs_in_workers(const std::vector<device>& devices);

/// A first call: runs `target` in every worker of `devices`, waits, and returns its results (arrays
/// whose shards stay in the workers), the output specs agreeing across workers.
flat_tree call_in_workers(const call_target& target, const flat_tree& inputs, const std::vector<device>& devices);

/// An asynchronous call with known output specs `out`: returns at once with its outputs.
flat_tree call_in_workers_async(const call_target& target, const flat_tree& inputs,
                                const std::vector<device>& devices, const spec_tree& out);

/// A call of a body returning nothing: the future says when it has run in every worker.
future<void> call_in_workers_void(const call_target& target, const flat_tree& inputs,
                                  const std::vector<device>& devices);

/// Tells `workers` that the controller let go of object `uid` (best effort, never throws).
void release_in_workers(std::uint64_t uid, const std::set<int>& workers) noexcept;

/// The shards of `a` on process `process`'s devices, in the order of its sharding's placements
/// (the order in which both sides of a call list them).
std::vector<shard_future> shards_on(const array& a, int process);

/// An array of `spec` with one shard per placement of its sharding, `shard_of(placement)` giving
/// each shard's future (the call's outputs on the controller, its inputs in a worker).
template <class ShardOf>
array assemble(const shape_dtype_struct& spec, ShardOf&& shard_of) {
  std::vector<shard> shards;
  for (auto& pl : spec.sharding->shard_placements(spec.shape))
    shards.push_back(shard{pl.device, pl.index, pl.replica_id, shard_of(pl)});
  auto st = std::make_shared<array_state>();
  st->shape = spec.shape;
  st->type = spec.dtype;
  st->layout = spec.sharding;
  st->set_shards(std::move(shards));
  return array(std::move(st));
}

} // namespace am::detail
