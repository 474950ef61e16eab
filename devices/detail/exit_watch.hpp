/// Waits until detached actors have finished exiting, their last messages sent, before the actor
/// system goes (a hang in CAF 0.17.6 otherwise: see exit_watch).
#pragma once

#include <caf/actor.hpp>

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>

namespace am::detail {

/// Tells when every watched detached actor has run its whole exit, the down messages to its
/// monitors included, so that the actor system is destroyed only afterwards.
///
/// Why (CAF 0.17.6): ~actor_system waits for the actors to unregister (await_all_actors_done), stops
/// the middleman, and then waits until every detached actor is destroyed (await_detached_threads).
/// A detached actor unregisters first and only then sends the down messages of its monitors. A
/// local actor whose handle another process holds is monitored by the BASP broker; when its down
/// message reaches the broker after the middleman's multiplexer has stopped, the broker's wake-up
/// stays in the multiplexer's pipe, read only when the middleman is destroyed, after
/// await_detached_threads. The message keeps a strong reference to its sender (the detached actor),
/// which is therefore never destroyed: the destructor waits forever. It hung a worker whose
/// controller died before the cluster formed (its call server was known to the controller), and a
/// worker's stop. Waiting here first closes the window: once the watch has run, the down message
/// is in the pipe while the multiplexer still reads it, ahead of the middleman's shutdown.
class exit_watch {
public:
  /// Watches `actor` (null: nothing). Call it right after spawning the actor, before its handle
  /// goes anywhere: CAF runs an actor's exit hooks newest first, so the watch, attached first, runs
  /// after every monitor's down message has been sent.
  void watch(const caf::actor& actor);

  /// Blocks until every watched actor has finished exiting (each must have been told to exit).
  void wait();

private:
  struct counter {
    std::mutex mutex;
    std::condition_variable changed;
    std::size_t running = 0;
  };
  std::shared_ptr<counter> counter_ = std::make_shared<counter>();
};

} // namespace am::detail
