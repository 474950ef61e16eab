#include "actormesh/actor_mesh/this_actor.hpp"

#include "actormesh/actors/errors.hpp"

namespace am {

namespace detail {
/// The context of the actor whose code runs on this thread (set by the user actor around its
/// constructor, endpoints and destructor).
thread_local const actor_context* current_actor = nullptr;
} // namespace detail

const actor_context& this_actor() {
  if (!detail::current_actor)
    throw runtime_error("am::this_actor() was called outside an actor's constructor, endpoint or destructor");
  return *detail::current_actor;
}

bool in_actor() noexcept { return detail::current_actor != nullptr; }

} // namespace am
