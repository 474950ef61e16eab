/// The scatter stage of pmap's psum_scatter over its own axis along dimension 0 (DESIGN.md section
/// 5, as the reductions of stage_reduction.hpp): within a process the local devices' parts are
/// summed into one host buffer and each local device gets its block of it (a view, no copy);
/// across processes the engine reduce-scatters that buffer among the processes (am::communicator
/// over Gloo, numbered and checked by the supervisor, in the flight recorder), each process
/// receiving its own devices' blocks. It runs on the same worker and communicator as the other
/// stages over the same devices (stage_group.hpp), so they keep one order on every participant.
#pragma once

#include "actors/buffer.hpp"
#include "actors/device_info.hpp"

#include <utility>
#include <vector>

namespace am::detail {

class runtime_impl;

/// One scatter stage of this process.
struct scatter_stage {
  am::dtype type = am::dtype::float32;
  shape_t part_shape;               ///< of one part: the blocks of every device one after another
  shape_t block_shape;              ///< of one device's result shard ([1, block...])
  std::vector<shard_future> parts;  ///< this process's parts, in the mapped axis's order
  int first_position = 0;           ///< this process's first position on the mapped axis
  std::vector<int> devices;         ///< the mapped axis's device ids, in its order (names the group)
  std::vector<int> processes;       ///< the processes holding parts, sorted; this one among them
  std::vector<std::pair<int, promise<buffer_ref>>> results; ///< (local device id, its result)
  std::vector<int> positions;       ///< per result, its device's position on the mapped axis
};

/// True when a psum_scatter over the mapped devices' `owners` (process per position) can be a
/// stage: one process, or processes holding as many positions each, in runs in process order (the
/// engine's reduce-scatter gives rank r the r-th of equal blocks).
bool stage_scatters(const std::vector<int>& owners) noexcept;

/// Queues `stage` behind the stages already issued for its devices; its results resolve when it
/// ran (each local device's block, seen as its own shard), or fail with the error of a part or of
/// the collective across processes (as every communicator operation).
void issue_scatter(runtime_impl& rt, scatter_stage stage);

} // namespace am::detail
