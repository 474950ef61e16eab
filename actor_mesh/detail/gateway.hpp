/// This process's actor gateway: the one actor other processes send calls of this process's actors
/// to, and answers of theirs. Published on a guarded port of its own (devices/detail/actor_links)
/// when the first mesh spanning several processes is spawned; its address goes into the cluster's
/// key-value store, and a peer connects to it on its first call there. A calling thread sends its
/// calls itself (CAF keeps each sender's order to one receiver, over a connection too), so each
/// thread's calls to one actor arrive in the order sent. Internal.
#pragma once

#include "actor_mesh/detail/actor_wire.hpp"
#include "actormesh/actor_mesh/detail/mesh_core.hpp"

#include <exception>
#include <functional>
#include <memory>
#include <string>

namespace am::detail {

class mesh_core;
class actor_gateway;
class runtime_context;

/// The gateway of the running runtime, started (spawned, published, announced) on first use.
std::shared_ptr<actor_gateway> gateway_of(runtime_context& context);

/// Makes mesh `key` (a collective spawn's) reachable from other processes.
void register_mesh(actor_gateway& gateway, const std::string& key, std::weak_ptr<mesh_core> core);

/// Connects this process's gateway to those of processes 1 .. own index - 1, once (a collective
/// spawn does, before its barrier): each pair of processes then has one connection, opened by the
/// higher one, whichever of them calls first later.
void connect_lower_peers(actor_gateway& gateway);

/// Connects this process's gateway to process `process`'s now (unless it is already), so that a
/// later send from an actor's thread does not wait for a connection.
void connect_to(actor_gateway& gateway, int process);

/// Forgets mesh `key` (its local actors stopped).
void unregister_mesh(actor_gateway& gateway, const std::string& key);

/// Sends `call` to process `process`'s gateway from the calling thread. `answer` (null for a
/// one-way call, whose request is 0) is told the answer, or an am::actor_failure_error naming
/// `who` when the process fails or cannot be reached.
void send_call(actor_gateway& gateway, int process, actor_call call, const std::string& who, int rank,
               answer_callback answer);

} // namespace am::detail
