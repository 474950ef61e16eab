/// The stage of pmap's ppermute over its own axis (doc/pmap.md, "How it runs", as the reductions of
/// stage_reduction.hpp): each device's result is the slice of its source in the permutation, or
/// zeros where none arrives. Within a process each device views its source's part where it is (no
/// copy; the devices receiving none share one block of zeros); across processes one
/// all-to-all of the collectives engine (am::communicator over Gloo, numbered and checked by the
/// supervisor, in the flight recorder) sends each process only the slices its devices receive,
/// each block padded to the most slices any process sends any other. It runs on the same worker
/// and communicator as the other stages over the same devices (stage_group.hpp), so they keep one
/// order on every participant.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"

#include <cstddef>
#include <utility>
#include <vector>

namespace am::detail {

class runtime_context;

/// One ppermute stage of this process.
struct permute_stage {
  am::dtype type = am::dtype::float32;
  shape_t part_shape;               ///< of one part (a device's slice)
  shape_t shard_shape;              ///< of one device's result shard ([1, part...])
  std::vector<shard_future> parts;  ///< this process's parts, in the mapped axis's order
  std::vector<int> devices;         ///< the mapped axis's device ids, in its order (names the group)
  std::vector<int> owners;          ///< per position on the mapped axis, its device's process
  std::vector<int> processes;       ///< the processes holding parts, sorted; this one among them
  std::vector<int> sources;         ///< per position, the position whose slice it receives (-1: zeros)
  std::vector<std::pair<int, promise<buffer_ref>>> results; ///< (local device id, its result)
  std::vector<int> positions;       ///< per result, its device's position on the mapped axis
};

/// Which slices of a ppermute cross between processes: the same on every process, computed from
/// the owners (process per position) and the sources (per position, the position it receives, -1
/// none; sources unique).
struct permute_exchange {
  /// Slices in each block of the all-to-all: the most any process sends any other (0: no slice
  /// crosses processes, and no collective runs).
  std::size_t slots = 0;
  /// [from rank][to rank]: the source positions whose slices process `from` sends process `to`,
  /// in the order of the positions receiving them (empty for from == to).
  std::vector<std::vector<std::vector<int>>> moves;
};

/// The exchange of a ppermute over `owners` with `sources` (ranks: the processes in sorted order).
permute_exchange plan_exchange(const std::vector<int>& owners, const std::vector<int>& sources);

/// Queues `stage` behind the stages already issued for its devices; its results resolve when it
/// ran (each local device's view of its source's slice or of zeros), or fail with the error of a
/// part or of the collective across processes (as every communicator operation).
void issue_permute(runtime_context& rt, permute_stage stage);

} // namespace am::detail
