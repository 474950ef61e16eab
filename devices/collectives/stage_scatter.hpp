/// The scatter stage of pmap's psum_scatter over its own axis (doc/pmap.md, "How it runs", as the
/// reductions of stage_reduction.hpp), on parts whose scatter dimension is their first (the caller
/// moves it there): within a process the local devices' parts are summed into one host buffer and
/// each local device gets its block of it (a view, no copy); across processes the engine
/// reduce-scatters that buffer among the processes (am::communicator over Gloo, numbered and
/// checked by the supervisor, in the flight recorder), each process receiving its own devices'
/// blocks: for any owners, the blocks put in process order and each process's padded with zeros to
/// the most positions any process holds (stage_positions.hpp) where they are not already so. It
/// runs on the same worker and communicator as the other stages over the same devices
/// (stage_group.hpp), so they keep one order on every participant.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"

#include <utility>
#include <vector>

namespace am::detail {

class runtime_context;

/// One scatter stage of this process.
struct scatter_stage {
  am::dtype type = am::dtype::float32;
  shape_t part_shape;               ///< of one part: the blocks of every device one after another
  shape_t block_shape;              ///< of one device's result shard ([1, block...])
  std::vector<shard_future> parts;  ///< this process's parts, in the mapped axis's order
  std::vector<int> devices;         ///< the mapped axis's device ids, in its order (names the group)
  std::vector<int> owners;          ///< per position on the mapped axis, its device's process
  std::vector<int> processes;       ///< the processes holding parts, sorted; this one among them
  std::vector<std::pair<int, promise<buffer_ref>>> results; ///< (local device id, its result)
  std::vector<int> positions;       ///< per result, its device's position on the mapped axis
};

/// Queues `stage` behind the stages already issued for its devices; its results resolve when it
/// ran (each local device's block, seen as its own shard), or fail with the error of a part or of
/// the collective across processes (as every communicator operation).
void issue_scatter(runtime_context& rt, scatter_stage stage);

} // namespace am::detail
