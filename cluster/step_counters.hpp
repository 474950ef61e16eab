/// Numbers the uses of each named participant set, so that the k-th use on every process meets
/// the k-th use on the others in the supervisor's collective check (a runtime service of the
/// floors that check agreement: live_devices, pmap across processes). Internal.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace am::detail {

/// The next step of each communicator name. Thread-safe.
struct step_counters {
  std::mutex mutex;
  std::map<std::string, std::uint64_t> next;

  /// The step this use of `name` takes (0 first).
  std::uint64_t take(const std::string& name) {
    std::lock_guard<std::mutex> guard(mutex);
    return next[name]++;
  }
};

/// `prefix` followed by the processes, comma-separated ("am.pmap/0,1"): the name every participant
/// derives alike from the same sorted list.
inline std::string communicator_name(const std::string& prefix, const std::vector<int>& processes) {
  std::string out = prefix;
  for (std::size_t k = 0; k < processes.size(); ++k)
    out += (k ? "," : "") + std::to_string(processes[k]);
  return out;
}

} // namespace am::detail
