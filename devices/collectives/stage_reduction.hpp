/// The reduction stage of pmap's psum, pmean, pmax and pmin (doc/pmap.md, "How it runs": a
/// collective is a stage between the per-device programs, never a handler waiting for another
/// device). Within a process the local devices' parts are combined into one host buffer that every
/// local device then shares; across processes that buffer is all-reduced among the processes
/// through the collectives engine (am::communicator over Gloo, numbered and checked by the
/// cluster's supervisor, in the flight recorder). Stages run on a worker thread per list of mapped
/// devices, in the order they were issued, which must be the same order in every process (one
/// program order, as in JAX); threads mapping different device lists have their own workers and
/// communicators, so they need no order between them.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"
#include "actormesh/devices/collectives/reduce_op.hpp"

#include <utility>
#include <vector>

namespace am::detail {

class runtime_context;

/// One reduction stage of this process.
struct reduction_stage {
  reduce_op op = reduce_op::sum;
  am::dtype type = am::dtype::float32;
  shape_t shape;                    ///< of one part and of the result
  std::vector<shard_future> parts;  ///< this process's parts, in the mapped axis's order
  int total_parts = 0;              ///< parts over every process (mean divides by it)
  std::vector<int> devices;         ///< the mapped axis's device ids, in its order (names the group)
  std::vector<int> processes;       ///< the processes holding parts, sorted; this one among them
  std::vector<std::pair<int, promise<buffer_ref>>> results; ///< (local device id, its result)
};

/// True when a stage can reduce `type` with `op` (float32 and float64; other dtypes keep the
/// array-level rewrite, whose float16 sums accumulate as numpy's do).
bool stage_reduces(am::dtype type, reduce_op op) noexcept;

/// Queues `stage` behind the stages already issued for its devices; its results resolve when it
/// ran (each local device gets the same memory, seen as its own shard), or fail with the error of
/// a part or of the collective across processes (am::timeout_error, am::process_failure_error,
/// am::desync_error with the flight recorder's dump, as every communicator operation).
void issue_reduction(runtime_context& rt, reduction_stage stage);

/// Combines `parts` (host memory, `count` elements each, at least one) into `out` with `op`
/// (mean: the sum, not yet divided), in part order over cache-sized tiles: element j of `out` is
/// ((p0[j] op p1[j]) op p2[j]) ..., as a sequential numpy sum over the parts.
void combine_parts(am::dtype type, reduce_op op, const std::vector<const void*>& parts, std::size_t count, void* out);

} // namespace am::detail
