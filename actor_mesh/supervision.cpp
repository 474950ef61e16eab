#include "actormesh/actor_mesh/supervision.hpp"

namespace am {

std::string to_string(supervision_event::kind k) {
  switch (k) {
  case supervision_event::kind::failed:
    return "failed";
  case supervision_event::kind::restarted:
    return "restarted";
  case supervision_event::kind::mesh_stopped:
    return "mesh_stopped";
  case supervision_event::kind::broadcast_failed:
    return "broadcast_failed";
  }
  return "unknown";
}

} // namespace am
