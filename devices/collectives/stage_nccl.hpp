/// pmap's collective stages on CUDA devices (doc/pmap.md, "On GPUs", as the host stages of
/// stage_reduction.hpp, stage_gather.hpp and stage_scatter.hpp): one am::nccl_communicator
/// operation over every mapped device, local and across processes at once, after the parts are
/// complete; each device's result lands in its own memory, on a stream of the stage's own per
/// device. The operations keep the order of the other stages over the same devices (the same
/// worker, stage_group.hpp) and the supervisor numbers and checks each one. On by default where
/// the build has NCCL (AM_PMAP_NCCL_STAGES=0 turns them off: pmap on CUDA devices then runs as one
/// plan, its collectives as shard transfers).
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"
#include "actormesh/devices/collectives/reduce_op.hpp"

#include <utility>
#include <vector>

namespace am::detail {

class runtime_context;

/// What an NCCL stage does to the parts (one per mapped device, rank r = position r).
enum class nccl_stage_kind {
  all_reduce,     ///< psum, pmean, pmax, pmin: every rank gets the parts combined with `op`
  all_gather,     ///< all_gather: every rank gets the parts one after another, in rank order
  reduce_scatter, ///< psum_scatter along dimension 0: rank r gets block r of the sum
  permute,        ///< ppermute: a rank gets its source's part (zeros without one)
};

/// One NCCL stage of this process.
struct nccl_stage {
  nccl_stage_kind kind = nccl_stage_kind::all_reduce;
  reduce_op op = reduce_op::sum;    ///< all_reduce's combination (reduce_scatter sums)
  am::dtype type = am::dtype::float32;
  shape_t part_shape;               ///< of one part
  shape_t result_shape;             ///< of one device's result
  std::vector<device> mapped;       ///< the mapped axis's devices, in its order: the ranks
  std::vector<int> processes;       ///< the processes holding parts, sorted; this one among them
  std::vector<std::pair<int, int>> pairs; ///< permute's (source, destination) positions
  std::vector<shard_future> parts;  ///< this process's parts, in the mapped axis's order
  std::vector<std::pair<int, promise<buffer_ref>>> results; ///< (local device id, its result)
};

/// True when this build can run stages on CUDA devices (CUDA and NCCL) and they are not turned
/// off (AM_PMAP_NCCL_STAGES=0).
bool nccl_stages_enabled() noexcept;

/// Queues `stage` behind the stages already issued for its devices; its results resolve when the
/// NCCL operation has finished, or fail with a part's error or the operation's
/// (am::timeout_error, am::process_failure_error, am::desync_error, am::runtime_error; the first
/// failure breaks the group's NCCL communicator, and every later stage of the group gets it).
void issue_nccl_stage(runtime_context& rt, nccl_stage stage);

} // namespace am::detail
