/// The umbrella header: everything a user of actormesh includes. Nothing here pulls in CAF.
///
/// Two levels of API. The array level (am::runtime, meshes and shardings, am::array and its
/// operations, jit, grad, vmap, pmap, the multihost utilities, colocated functions and objects)
/// follows JAX and is what programs use. The program level (am::program and program_builder in
/// actors/program.hpp, am::execute, am::upload, am::upload_written and am::fetch in devices/calls.hpp)
/// is the layer the array level is built on: per-shard programs sent to one device's lane. It is
/// public for building new operations and backends, and may change with the runtime's execution
/// model (doc/architecture.md, "Per-shard programs"). Names in am::detail are internal at either level.
#ifndef ACTORMESH_HPP
#define ACTORMESH_HPP

// The runtime, devices and the lanes.
#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"
#include "actormesh/actors/dtype.hpp"
#include "actormesh/actors/dtype_promotion.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/float16.hpp"
#include "actormesh/actors/future.hpp"
#include "actormesh/actors/lane.hpp"
#include "actormesh/actors/program.hpp"
#include "actormesh/actors/task.hpp"
#include "actormesh/devices/calls.hpp"
#include "actormesh/devices/collectives/world.hpp"
#include "actormesh/devices/discovery.hpp"
#include "actormesh/devices/distributed.hpp"
#include "actormesh/devices/memory.hpp"
#include "actormesh/devices/options.hpp"
#include "actormesh/devices/runtime.hpp"
#include "actormesh/observability/trace.hpp"
#include "actormesh/observability/runtime_stats.hpp"

// Meshes, shardings, host and global arrays, operations, jit.
#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/debugging.hpp"
#include "actormesh/sharding/host_array.hpp"
#include "actormesh/sharding/host_array_print.hpp"
#include "actormesh/sharding/jit.hpp"
#include "actormesh/sharding/make_array.hpp"
#include "actormesh/sharding/mesh.hpp"
#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/ops.hpp"
#include "actormesh/sharding/partition_spec.hpp"
#include "actormesh/sharding/positional_sharding.hpp"
#include "actormesh/sharding/random.hpp"
#include "actormesh/sharding/ready.hpp"
#include "actormesh/sharding/reductions.hpp"
#include "actormesh/sharding/shape_ops.hpp"
#include "actormesh/sharding/sharding_errors.hpp"
#include "actormesh/sharding/single_device_sharding.hpp"
#include "actormesh/sharding/visualize.hpp"

// grad, vmap, pmap and the collectives inside pmap.
#include "actormesh/parallel/parallel.hpp"

// Multihost utilities (jax.experimental.multihost_utils) and the trees they take.
#include "actormesh/multihost/checkpoint.hpp"
#include "actormesh/multihost/live_devices.hpp"
#include "actormesh/multihost/local_mesh.hpp"
#include "actormesh/multihost/multihost_errors.hpp"
#include "actormesh/multihost/multihost_utils.hpp"
#include "actormesh/multihost/preemption.hpp"
#include "actormesh/multihost/tree.hpp"
#include "actormesh/multihost/tree_def.hpp"
#include "actormesh/multihost/tree_device_put.hpp"

// Colocated CPU devices, functions and classes (jax.experimental.colocated_python).
#include "actormesh/colocated/colocated.hpp"

// Actor meshes: user actors over processes and devices, typed endpoints, supervision.
#include "actormesh/actor_mesh/actor_mesh.hpp"

#endif // ACTORMESH_HPP
