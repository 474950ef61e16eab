/// A worker's side of single-controller mode: the call server, a detached actor that takes the
/// controller's requests in the order they come over the one connection, issues them to this
/// process's devices in a lane per controller thread (so each caller's order holds and one
/// caller's wait never holds up another's), keeps the shards the controller has handles for, and
/// answers each output and fetch. Malformed requests are refused with an answer (or a log line when
/// they name no answer) and the server keeps serving. Internal.
#pragma once

#include "actormesh/actors/future.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <memory>

namespace am::detail {
class runtime_impl;
}

namespace am::detail::remote {

/// Spawns the call server of worker runtime `rt` (which outlives it). It holds requests until it
/// gets ready_atom (the runtime's devices are up). `stopped` is resolved when the controller says
/// it stops.
caf::actor spawn_call_server(caf::actor_system& system, runtime_impl& rt, promise<void> stopped);

} // namespace am::detail::remote
