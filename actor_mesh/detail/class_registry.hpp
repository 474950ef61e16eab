/// The actor classes of this binary and their endpoints. A class name is registered once per
/// process (as colocated classes are); every process of the binary registers the same names, so a
/// name can travel. Internal.
#ifndef ACTORMESH_ACTOR_MESH_DETAIL_CLASS_REGISTRY_HPP
#define ACTORMESH_ACTOR_MESH_DETAIL_CLASS_REGISTRY_HPP

#include "actormesh/actor_mesh/detail/actor_task.hpp"

#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>
#include <vector>

namespace am::detail {

/// Sends an answer back to the process that called: an error, or the encoded value.
using remote_reply = std::function<void(const std::exception_ptr& error, std::string value)>;

/// Makes the task that runs an endpoint for a call from another process: the encoded arguments
/// (decoded by the actor), where the answer goes, and whether it is one-way. Throws
/// am::type_error for an endpoint whose types cannot travel.
using remote_task_factory = std::function<task_ptr(std::string arguments, remote_reply reply, bool one_way)>;

/// One endpoint: its name, the member function it is (type and bytes), and how a call from
/// another process runs it.
struct endpoint_entry {
  std::string name;
  std::type_index member_type;
  std::string member;
  remote_task_factory remote_task;
};

/// A registered class: its name and its endpoints (added under `mutex`; a mesh keeps a copy of
/// them taken when it is spawned).
struct actor_class_info {
  std::string name;
  mutable std::mutex mutex;
  std::vector<endpoint_entry> endpoints;
};

/// Registers a class name; throws am::value_error when it is taken.
std::shared_ptr<actor_class_info> register_actor_class(const std::string& name);

/// The class registered as `name`; throws am::value_error when there is none.
std::shared_ptr<const actor_class_info> find_actor_class(const std::string& name);

/// Adds an endpoint; throws am::value_error when its name or its member function is taken.
void add_endpoint(actor_class_info& info, endpoint_entry entry);

/// The endpoints as they are now (what a spawned mesh calls).
std::shared_ptr<const std::vector<endpoint_entry>> endpoints_of(const actor_class_info& info);

/// The endpoint named `name` of `endpoints`, or null.
const endpoint_entry* find_endpoint(const std::vector<endpoint_entry>& endpoints, const std::string& name);

/// The name of the endpoint that is member function `member` (of type `type`); throws
/// am::value_error when it is not one of `endpoints`.
const std::string& endpoint_name(const std::string& class_name, const std::vector<endpoint_entry>& endpoints,
                                 std::type_index type, const std::string& member);

} // namespace am::detail

#endif // ACTORMESH_ACTOR_MESH_DETAIL_CLASS_REGISTRY_HPP
