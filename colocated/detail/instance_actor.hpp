/// The actor holding one colocated object's instance: detached (a method may block, sleep or do
/// I/O without holding up anyone else), constructing the object on its first message and
/// destroying it, on its own thread, when told to go. Internal; only .cpp files include it.
#pragma once

#include "actormesh/actors/device_info.hpp"
#include "actormesh/colocated/detail/object_record.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <exception>
#include <functional>
#include <vector>

namespace am::detail {

/// One method call: run with the instance, or with the constructor's error when it failed.
/// Must not throw.
struct instance_task {
  std::function<void(void* instance, const std::exception_ptr& construction_error)> run;
};

/// Spawns an instance actor serving `devices`; the object is built by `factory` when the first
/// task arrives, with those devices as the colocated call's (am::colocated_devices).
caf::actor spawn_instance(caf::actor_system& system, instance_factory factory, std::vector<device> devices);

/// Queues a task at the instance (dropped, its promises breaking, when the actor is gone).
void send_task(const caf::actor& instance, instance_task task);

/// Tells the instance to destroy its object and stop, after the tasks queued before.
void send_destroy(const caf::actor& instance);

/// Stops the instance at once (its queued tasks are dropped): the runtime is stopping.
void send_stop(const caf::actor& instance);

} // namespace am::detail
