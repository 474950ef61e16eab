/// The host side of colocated objects: one instance per (object, device set), each an actor of
/// its own (spawned on the first method call for that device set), kept by a store that lives as
/// long as the runtime. No CAF here: the actors are colocated/detail/instance_actor's.
#pragma once

#include "actormesh/actors/device_info.hpp"
#include "actormesh/actors/future.hpp"
#include "actormesh/colocated/detail/flat_tree.hpp"
#include "actormesh/colocated/detail/object_record.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace am::detail {

/// Runs `method` on the instance of `record` for `devices` in this process (constructing it first
/// on the instance's thread when this is its first call) and waits for the result. Rethrows the
/// constructor's exception on every call when construction failed. Called on a host lane.
flat_tree run_on_instance(const object_record& record, const std::vector<device>& devices,
                          std::function<flat_tree(void* instance)> method);

/// Tells every instance of object `uid` to go once it has run the calls it received; resolves
/// `destroyed` when the last of them is gone.
void release_instances(object_store& store, std::uint64_t uid, promise<void> destroyed);

} // namespace am::detail
