/// The errors of actor meshes and what an actor throws to declare itself broken.
#ifndef ACTORMESH_ACTOR_MESH_ACTOR_ERRORS_HPP
#define ACTORMESH_ACTOR_MESH_ACTOR_ERRORS_HPP

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

/// An endpoint in another process threw an exception of a type this process cannot rebuild (not
/// one of actormesh's errors nor a standard exception): its type's name and its text travel.
class remote_error : public error {
public:
  remote_error(std::string type_name, const std::string& what) : error(what), type_name_(std::move(type_name)) {}
  /// The exception's type, as the process that threw it names it ("my::error").
  const std::string& type_name() const noexcept { return type_name_; }

private:
  std::string type_name_;
};

} // namespace am

#endif // ACTORMESH_ACTOR_MESH_ACTOR_ERRORS_HPP
