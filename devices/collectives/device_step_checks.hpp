/// The participants' own check of a device communicator's steps (NCCL's, whose bytes move over the
/// GPUs' links): every collective and every send/recv between two processes is checked by the
/// processes that take part, against each other's fingerprint, over a host communicator among
/// them (the shared-memory mesh or Gloo), as host collectives are; the mesh supervisor sees only
/// the creation. Internal to devices/collectives.
#pragma once

#include "actormesh/devices/collectives/communicator.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace am::detail {

/// The checks of one device communicator `name` over `processes` (sorted, this one among them).
/// With one process there is nothing to check and nothing is made. Not thread-safe: the device
/// communicator runs one operation at a time.
class device_step_checks {
public:
  /// Joins the host communicator of the checks (collective over `processes`, within `timeout`;
  /// its connections bound to `bind_address`) and checks that every process lists the device
  /// communicator alike (`creation`, "nccl create over devices [0, 1]"): am::desync_error naming
  /// who listed what otherwise.
  device_step_checks(cluster_services& cluster, std::vector<int> processes, std::string name,
                     const std::string& creation, const std::string& bind_address, std::chrono::milliseconds timeout);

  /// Checks that every process issued `signature` as collective `step` of the communicator:
  /// "Collective <step> of NCCL communicator '<name>' differs between processes (desync): ...",
  /// or the timeout naming who never issued it, or am::process_failure_error.
  void collective(std::uint64_t step, const std::string& signature, std::chrono::milliseconds timeout);

  /// Checks that the processes of ranks `from` and `to` (`from_process`, `to_process`) both
  /// issued `signature` as their next send/recv from `from` to `to`; nothing to check when one
  /// process holds both ranks.
  void pair(int from, int to, int from_process, int to_process, const std::string& signature,
            std::chrono::milliseconds timeout);

private:
  std::string name_;
  std::vector<int> processes_;
  std::unique_ptr<communicator> checks_; ///< null with one process
  std::map<std::pair<int, int>, std::uint64_t> pair_steps_;

  int rank_of(int process) const;
};

} // namespace am::detail
