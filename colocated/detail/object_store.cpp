#include "colocated/detail/object_store.hpp"

#include "actormesh/actors/future.hpp"
#include "colocated/detail/instance_actor.hpp"
#include "colocated/detail/body_scope.hpp"
#include "colocated/detail/call_devices.hpp"
#include "devices/detail/actor_system_of.hpp"
#include "devices/runtime_context.hpp"

#include <caf/actor_system.hpp>

#include <atomic>
#include <map>
#include <mutex>

namespace am::detail {

/// The instances of one runtime, by object and device set: a service of the runtime, so that it
/// is destroyed (stopping every instance) when the runtime stops, while its actor system is there.
class object_store {
public:
  explicit object_store(caf::actor_system& system) : system_(system) {}

  ~object_store() {
    for (auto& [uid, by_devices] : instances_)
      for (auto& [key, actor] : by_devices)
        send_stop(actor);
  }

  object_store(const object_store&) = delete;
  object_store& operator=(const object_store&) = delete;

  /// The instance of `record` for the device set `devices`, spawned on first use.
  caf::actor instance(const object_record& record, const std::vector<device>& devices) {
    std::lock_guard<std::mutex> guard(mutex_);
    auto& slot = instances_[record.uid][device_id_set(devices)];
    if (!slot)
      slot = spawn_instance(system_, record.factory, devices);
    return slot;
  }

  /// Every instance of `uid`, forgotten here.
  std::vector<caf::actor> take(std::uint64_t uid) {
    std::vector<caf::actor> out;
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = instances_.find(uid);
    if (it == instances_.end())
      return out;
    for (auto& [key, actor] : it->second)
      out.push_back(actor);
    instances_.erase(it);
    return out;
  }

private:
  caf::actor_system& system_;
  std::mutex mutex_;
  std::map<std::uint64_t, std::map<std::vector<int>, caf::actor>> instances_;
};

namespace {

/// The instances of the colocated objects that live in this process.
const service_key<object_store> object_store_key{"colocated objects"};

std::shared_ptr<object_store> store_of(runtime_context& rt) {
  return rt.service(object_store_key, [&rt] { return std::make_shared<object_store>(actor_system_of(rt)); });
}

} // namespace

flat_tree run_on_instance(const object_record& record, const std::vector<device>& devices,
                          std::function<flat_tree(void* instance)> method) {
  caf::actor instance;
  {
    auto store = store_of(*current_context()); // not held while waiting: stop() may destroy it
    record.used_in(store);
    instance = store->instance(record, devices);
  }
  promise<flat_tree> result; // moved into the task: a dropped task breaks it, failing the wait
  auto done = result.get_future();
  send_task(instance, instance_task{[result = std::move(result), method = std::move(method), devices](void* object, const std::exception_ptr& error) {
    if (error) {
      result.set_error(error);
      return;
    }
    try {
      colocated_body_scope running(devices); // a method dropping a wrapper does not wait for it here
      result.set_value(method(object));
    } catch (...) {
      result.set_error(std::current_exception());
    }
  }});
  return done.get();
}

void release_instances(object_store& store, std::uint64_t uid, promise<void> destroyed) {
  auto actors = store.take(uid);
  if (actors.empty()) {
    destroyed.set_value();
    return;
  }
  struct countdown {
    std::atomic<std::size_t> left;
    promise<void> done;
  };
  auto gone = std::make_shared<countdown>(actors.size(), std::move(destroyed));
  for (auto& actor : actors) {
    send_destroy(actor);
    // Runs when the actor has exited (its object destroyed), or at once when it already has.
    actor->attach_functor([gone] {
      if (gone->left.fetch_sub(1) == 1)
        gone->done.set_value();
    });
  }
}

} // namespace am::detail
