/// The gather stage of pmap's all_gather over its own axis (doc/pmap.md, "How it runs", as the
/// reductions of stage_reduction.hpp): within a process the local devices' parts are copied into
/// one host buffer, at their places on the mapped axis, that every local device then shares; across
/// processes the processes' blocks are all-gathered through the collectives engine
/// (am::communicator over Gloo, numbered and checked by the supervisor, in the flight recorder),
/// each block padded to the most positions any process holds when they hold different numbers
/// (stage_positions.hpp), then placed by position. It runs on the same worker and communicator as
/// the reductions over the same devices (stage_group.hpp), so reductions and gathers keep one order
/// on every participant.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"

#include <utility>
#include <vector>

namespace am::detail {

class runtime_context;

/// One gather stage of this process.
struct gather_stage {
  am::dtype type = am::dtype::float32;
  shape_t part_shape;               ///< of one part
  shape_t shape;                    ///< of the result: the parts one after another, in axis order
  std::vector<shard_future> parts;  ///< this process's parts, in the mapped axis's order
  std::vector<int> devices;         ///< the mapped axis's device ids, in its order (names the group)
  std::vector<int> owners;          ///< per position on the mapped axis, its device's process
  std::vector<int> processes;       ///< the processes holding parts, sorted; this one among them
  std::vector<std::pair<int, promise<buffer_ref>>> results; ///< (local device id, its result)
};

/// Queues `stage` behind the stages already issued for its devices; its results resolve when it
/// ran (each local device gets the same memory, seen as its own shard), or fail with the error of
/// a part or of the collective across processes (am::timeout_error, am::process_failure_error,
/// am::desync_error with the flight recorder's dump, as every communicator operation).
void issue_gather(runtime_context& rt, gather_stage stage);

} // namespace am::detail
