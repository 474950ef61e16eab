/// The errors of actor meshes and what an actor throws to declare itself broken.
#pragma once

#include "actormesh/actors/errors.hpp"

#include <string>

namespace am {

/// Thrown by an endpoint to say that its actor's state is broken (not only this call): the call
/// fails with it, and the actor fails. Its mesh's supervision policy then restarts the actor (a
/// fresh instance from the recorded constructor arguments), or fails its pending and later calls
/// with am::actor_failure_error, or stops the mesh. Any other exception fails only its call.
class actor_fault : public error {
public:
  using error::error;
};

/// A call reached an actor that failed (its constructor threw, it threw am::actor_fault beyond its
/// restart policy, its process died) or that was stopped. The message names the class, the point and
/// the cause.
class actor_failure_error : public runtime_error {
public:
  actor_failure_error(const std::string& what, int rank) : runtime_error(what), rank_(rank) {}
  /// The failed actor's rank in the mesh it was spawned in.
  int rank() const noexcept { return rank_; }

private:
  int rank_;
};

} // namespace am
