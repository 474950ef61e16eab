/// The part of a mesh that one process owns (JAX's `mesh.local_mesh`), which the host-local <->
/// global conversions are defined on.
#ifndef ACTORMESH_MULTIHOST_LOCAL_MESH_HPP
#define ACTORMESH_MULTIHOST_LOCAL_MESH_HPP

#include "actormesh/sharding/mesh.hpp"

namespace am {

/// The sub-mesh of `m` holding the devices of process `process`, with the same axis names: along
/// each axis, the smallest range of coordinates that skips none of the process's devices. Throws
/// am::value_error when that block holds another process's device ("When passing host local
/// inputs to pjit, devices connected to a single host must form a contiguous subcube of the global
/// device mesh") or when the mesh has no device of the process.
mesh local_mesh(const mesh& m, int process);

} // namespace am

#endif // ACTORMESH_MULTIHOST_LOCAL_MESH_HPP
