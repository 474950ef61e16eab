/// Which positions of pmap's mapped axis each process holds, for the stages that move blocks
/// between processes (stage_gather.hpp, stage_scatter.hpp, stage_permute.hpp): the engine's
/// collectives give rank r (the r-th process in sorted order) the r-th of equal blocks, so a stage
/// over processes holding different numbers of positions, or positions that are not one run per
/// process in process order, pads each process's block to the largest count and places the parts
/// by position.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <vector>

namespace am::detail {

/// The positions on the mapped axis of each process, in axis order; the processes in sorted order
/// (rank order of the stage's communicator).
struct process_positions {
  std::map<int, std::vector<std::size_t>> of; ///< process -> its positions, ascending
  std::size_t slots = 0;                      ///< the most positions any process holds
  /// True when every process holds `slots` positions in one run, the runs in process order: the
  /// engine's blocks are then the axis's order itself (no padding, no placement).
  bool in_order = true;

  /// The rank of `process` (its place among the sorted processes); -1 when it holds none.
  int rank_of(int process) const {
    int r = 0;
    for (auto& [p, at] : of) {
      if (p == process)
        return r;
      ++r;
    }
    return -1;
  }
};

/// The positions of each process in `owners` (process per position on the mapped axis).
inline process_positions positions_by_process(const std::vector<int>& owners) {
  process_positions out;
  for (std::size_t p = 0; p < owners.size(); ++p)
    out.of[owners[p]].push_back(p);
  for (auto& [process, at] : out.of)
    out.slots = std::max(out.slots, at.size());
  std::size_t next = 0;
  for (auto& [process, at] : out.of)
    for (auto p : at)
      out.in_order = out.in_order && at.size() == out.slots && p == next++;
  return out;
}

} // namespace am::detail
