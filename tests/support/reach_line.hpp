// How a test program's process reaches each device of its cluster, as one line the tests match:
// "reach: here here own own" (devices by id; devices/detail/device_endpoint.hpp's kinds).
#pragma once

#include "actormesh/devices/runtime.hpp"
#include "devices/runtime_context.hpp"

#include <string>

namespace am::testing {

/// "reach:" and, for each device of the cluster by id, "here", "own" (its own process drives it)
/// or "link" (this process drives it through a worker's link).
inline std::string reach_line() {
  auto context = am::detail::current_context();
  std::string line = "reach:";
  for (auto& d : am::devices()) {
    switch (context->reach(d)) {
      case am::detail::device_reach::here: line += " here"; break;
      case am::detail::device_reach::own_process: line += " own"; break;
      case am::detail::device_reach::through_link: line += " link"; break;
    }
  }
  return line;
}

} // namespace am::testing
