/// The umbrella header: everything a user of actormesh includes. Nothing here pulls in CAF.
///
/// Two levels of API. The array level (am::runtime, meshes and shardings, am::array and its
/// operations, jit, grad, vmap, pmap, the multihost utilities, colocated functions and objects)
/// follows JAX and is what programs use. The program level (am::program and program_builder in
/// actors/program.hpp, am::execute, am::upload, am::upload_written and am::fetch in devices/calls.hpp)
/// is the layer the array level is built on: per-shard programs sent to one device's lane. It is
/// public for building new operations and backends, and may change with the runtime's execution
/// model (doc/architecture.md, "Per-shard programs"). Names in am::detail are internal at either level.
#pragma once

// The runtime, devices and the lanes.
#include "actors/buffer.hpp"
#include "actors/device_info.hpp"
#include "actors/dtype.hpp"
#include "actors/dtype_promotion.hpp"
#include "actors/errors.hpp"
#include "actors/float16.hpp"
#include "actors/future.hpp"
#include "actors/lane.hpp"
#include "actors/program.hpp"
#include "devices/calls.hpp"
#include "devices/collectives/world.hpp"
#include "devices/discovery.hpp"
#include "devices/distributed.hpp"
#include "devices/memory.hpp"
#include "devices/options.hpp"
#include "devices/runtime.hpp"
#include "observability/trace.hpp"
#include "observability/runtime_stats.hpp"

// Meshes, shardings, host and global arrays, operations, jit.
#include "sharding/array.hpp"
#include "sharding/host_array.hpp"
#include "sharding/host_array_print.hpp"
#include "sharding/jit.hpp"
#include "sharding/make_array.hpp"
#include "sharding/mesh.hpp"
#include "sharding/named_sharding.hpp"
#include "sharding/ops.hpp"
#include "sharding/partition_spec.hpp"
#include "sharding/positional_sharding.hpp"
#include "sharding/random.hpp"
#include "sharding/reductions.hpp"
#include "sharding/shape_ops.hpp"
#include "sharding/sharding_errors.hpp"
#include "sharding/single_device_sharding.hpp"
#include "sharding/visualize.hpp"

// grad, vmap, pmap and the collectives inside pmap.
#include "parallel/parallel.hpp"

// Multihost utilities (jax.experimental.multihost_utils) and the trees they take.
#include "multihost/checkpoint.hpp"
#include "multihost/live_devices.hpp"
#include "multihost/local_mesh.hpp"
#include "multihost/multihost_errors.hpp"
#include "multihost/multihost_utils.hpp"
#include "multihost/preemption.hpp"
#include "multihost/tree.hpp"
#include "multihost/tree_def.hpp"

// Colocated CPU devices, functions and classes (jax.experimental.colocated_python).
#include "colocated/colocated.hpp"
