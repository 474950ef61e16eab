/// Actor meshes over a single-controller cluster's workers: the controller spawns a mesh whose
/// points lie in worker processes by asking each such worker (through its host service "am.actor_mesh",
/// in the controller thread's host lane there) to build its part, with the travelling constructor
/// (actor_constructor.hpp); the part's actors are then called through the worker's actor gateway,
/// as in a multi-controller cluster. Stopping the mesh stops the parts. Internal.
#pragma once

#include "actormesh/actor_mesh/actor_layout.hpp"
#include "actormesh/actor_mesh/detail/mesh_core.hpp"
#include "actormesh/actor_mesh/supervision.hpp"
#include "actormesh/actors/future.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace am::detail {

class runtime_context;

/// Has every worker of `workers` build its points of `layout` as mesh `key` of class `class_name`
/// (each point by `remote`'s constructor from its arguments, under `policy`), and returns once each
/// has, or throws the first failure after `timeout` at the most (the parts that were built are
/// stopped again).
void spawn_in_workers(runtime_context& rt, const std::vector<int>& workers, const std::string& key,
                      const std::string& class_name, const actor_layout& layout, const supervision_policy& policy,
                      const remote_construction& remote, std::chrono::milliseconds timeout);

/// The endpoint name under which a worker's part sends its controller the supervision events of
/// its actors (a one-way call to the controller's mesh); actor classes cannot register names
/// starting with "am.".
inline const std::string supervision_endpoint = "am.supervision_event";

/// A supervision event as it travels to the controller, and back from bytes (am::value_error when
/// malformed).
std::string encode_event(const supervision_event& event);
supervision_event decode_event(const std::string& bytes);

/// Has every worker of `workers` stop its part of mesh `key` (after the calls already issued);
/// the future resolves once each has answered, or failed to (a worker that is gone has no part).
future<void> stop_in_workers(runtime_context& rt, const std::vector<int>& workers, const std::string& key);

} // namespace am::detail
