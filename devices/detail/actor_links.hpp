/// Direct links between the actors of two processes of a cluster, for the floors above that keep
/// actors other processes talk to (the actor meshes' gateways): one process publishes an actor on
/// a port of its own, behind the same guard as the coordinator's (the cluster's secret, TLS, frame
/// limits), bound to the interface the cluster uses; another connects to it. Internal.
#pragma once

#include <caf/actor.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace am::detail {

class runtime_context;

/// An actor published on a guarded port: the address other processes connect to, and the port,
/// open while a copy lives (drop the last one before the runtime's actor system goes: a runtime
/// service that holds it does).
struct published_actor {
  std::string address;             ///< "host:port"
  std::shared_ptr<void> listener;  ///< the open port
};

/// Publishes `actor` on a guarded port of this process. Throws am::runtime_error when it cannot
/// bind.
published_actor publish_actor(runtime_context& context, const caf::actor& actor);

/// Connects to the actor another process published at `address`, retrying until `deadline`.
/// Throws am::timeout_error or am::value_error (refused) naming the address.
caf::actor connect_published(runtime_context& context, const std::string& address,
                             std::chrono::steady_clock::time_point deadline);

} // namespace am::detail
