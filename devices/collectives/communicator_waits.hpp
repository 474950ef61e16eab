/// What both communicators (Gloo's and NCCL's) share while they wait on other processes: how often
/// a waiting caller asks the cluster whether the participants are alive, the time left before a
/// deadline, and how a list of processes or devices is written in their errors.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace am::detail {

/// How often a waiting caller asks the cluster whether the participants are alive.
inline constexpr std::chrono::milliseconds participant_liveness_poll{50};

/// Milliseconds left until `deadline`, never negative.
inline std::chrono::milliseconds time_left(std::chrono::steady_clock::time_point deadline) {
  return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()),
                  std::chrono::milliseconds(0));
}

/// "[0, 2, 3]": a list of processes or device ids as the communicators' errors write it.
inline std::string bracketed_list_text(const std::vector<int>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

} // namespace am::detail
