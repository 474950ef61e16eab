/// The mesh's side of calls from other processes, for the gateway (gateway.cpp). Internal; only
/// .cpp files include it.
#pragma once

#include "actor_mesh/detail/actor_wire.hpp"
#include "actormesh/actor_mesh/detail/mesh_core.hpp"

#include <functional>
#include <string>

namespace am::detail {

/// Runs `call` (from another process) on this process's actor of its rank, after the calls queued
/// there before; `reply` is told the answer (on the actor's thread) or the refusal.
void serve_remote_call(mesh_core& core, actor_call call, std::function<void(const actor_answer&)> reply);

/// Process `process` failed: its actors of this mesh fail (their later calls too), and the mesh's
/// owner gets a supervision event for each.
void remote_process_failed(mesh_core& core, int process, const std::string& notice);

} // namespace am::detail
