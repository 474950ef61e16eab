#include "devices/detail/exit_watch.hpp"

#include <caf/abstract_actor.hpp>
#include <caf/actor_cast.hpp>

namespace am::detail {

void exit_watch::watch(const caf::actor& actor) {
  if (!actor)
    return;
  {
    std::lock_guard<std::mutex> guard(counter_->mutex);
    ++counter_->running;
  }
  // Runs on the actor's own thread at the end of its exit (or here, at once, if it has exited).
  caf::actor_cast<caf::abstract_actor*>(actor)->attach_functor([c = counter_] {
    std::lock_guard<std::mutex> guard(c->mutex);
    --c->running;
    c->changed.notify_all();
  });
}

void exit_watch::wait() {
  std::unique_lock<std::mutex> guard(counter_->mutex);
  counter_->changed.wait(guard, [this] { return counter_->running == 0; });
}

} // namespace am::detail
