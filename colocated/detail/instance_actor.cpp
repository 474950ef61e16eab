#include "colocated/detail/instance_actor.hpp"

#include "actors/detail/log.hpp"
#include "colocated/detail/body_scope.hpp"

#include "devices/detail/urgent_exit.hpp"

#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <memory>

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(am::detail::instance_task)

namespace am::detail {

namespace {

using destroy_atom = caf::atom_constant<caf::atom("am_odestr")>;

struct instance_state {
  instance_factory factory;
  std::vector<device> devices;           // the device set it serves: the default while it is built
  std::shared_ptr<void> object;          // the instance, once built
  std::exception_ptr construction_error; // or why it could not be built
  bool constructed = false;
  static inline const char* name = "am.colocated_instance";
};

/// Builds the object on the first call; a constructor that throws fails this and every later call.
void construct_once(instance_state& st) {
  if (st.constructed)
    return;
  st.constructed = true;
  try {
    colocated_body_scope building(st.devices); // an am::array argument arriving lands on its first device
    st.object = st.factory();
  } catch (...) {
    st.construction_error = std::current_exception();
  }
  st.factory = nullptr; // the recorded arguments are not needed any more
}

caf::behavior instance_behavior(caf::stateful_actor<instance_state>* self, instance_factory factory,
                                std::vector<device> devices) {
  self->state.factory = std::move(factory);
  self->state.devices = std::move(devices);
  return {
    [self](instance_task& task) {
      auto& st = self->state;
      construct_once(st);
      task.run(st.object.get(), st.construction_error);
    },
    [self](destroy_atom) {
      self->state.object.reset(); // the destructor runs here, on the instance's own thread
      self->quit();
    },
  };
}

} // namespace

caf::actor spawn_instance(caf::actor_system& system, instance_factory factory, std::vector<device> devices) {
  return system.spawn<caf::detached>(instance_behavior, std::move(factory), std::move(devices));
}

void send_task(const caf::actor& instance, instance_task task) {
  caf::anon_send(instance, std::move(task));
}

void send_destroy(const caf::actor& instance) {
  caf::anon_send(instance, destroy_atom::value);
}

void send_stop(const caf::actor& instance) {
  send_urgent_exit(instance);
}

} // namespace am::detail
