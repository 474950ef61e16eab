/// Awaiting an array's data in a coroutine: `co_await am::ready(y)` is block_until_ready without
/// holding the thread (actors/task.hpp).
#ifndef ACTORMESH_SHARDING_READY_HPP
#define ACTORMESH_SHARDING_READY_HPP

#include "actormesh/actors/task.hpp"
#include "actormesh/sharding/array.hpp"

namespace am {

/// A task that finishes with `x` once every shard of `x` on this process's devices has been
/// computed, or with the first error a device reported (as block_until_ready throws it).
task<array> ready(array x);

} // namespace am

#endif // ACTORMESH_SHARDING_READY_HPP
