/// What an actor knows of itself while it runs: its class, the mesh it was spawned in, its point.
#ifndef ACTORMESH_ACTOR_MESH_THIS_ACTOR_HPP
#define ACTORMESH_ACTOR_MESH_THIS_ACTOR_HPP

#include "actormesh/actor_mesh/actor_layout.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace am {

/// An actor's own place: valid on the actor's thread, during its constructor, endpoints and
/// destructor.
struct actor_context {
  std::string class_name;                ///< the registered class
  std::vector<std::string> axis_names;   ///< the axes of the mesh it was spawned in
  std::vector<std::int64_t> axis_sizes;  ///< and their sizes
  actor_point point;                     ///< its rank, coordinates, process and devices
};

/// The context of the actor whose code is running on this thread; am::runtime_error elsewhere.
const actor_context& this_actor();

/// True while an actor's code runs on this thread.
bool in_actor() noexcept;

} // namespace am

#endif // ACTORMESH_ACTOR_MESH_THIS_ACTOR_HPP
