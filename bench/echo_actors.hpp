/// The echo actors of the actor mesh benchmarks (bench_actor_mesh, bench_actor_mesh_processes): the
/// actor mesh's and raw CAF's, doing the same work, so that the two differ only in how a message
/// reaches them.
#pragma once

#include <actormesh.hpp>

#include "call_peers.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <memory>

namespace am::bench {

/// The actor every call reaches: answers its input plus one, counts one-way messages; as a relay,
/// answers what another echo answers, awaiting it in a coroutine or blocking its thread on it.
struct echo {
  int ping(int v) { return v + 1; }
  void note(int) { ++notes; }
  long count() const { return notes; }
  am::task<int> relay(am::actor_mesh<echo> next, int v) { co_return co_await next.call_one(&echo::ping, v); }
  int relay_blocking(am::actor_mesh<echo> next, int v) { return next.call_one(&echo::ping, v).get(); }
  long notes = 0;
};

/// Its class (registered once per program that includes this header).
inline const auto echo_class = am::actor_class<echo>("bench.echo")
                                 .endpoint("ping", &echo::ping)
                                 .endpoint("note", &echo::note)
                                 .endpoint("count", &echo::count)
                                 .endpoint("relay", &echo::relay)
                                 .endpoint("relay_blocking", &echo::relay_blocking);

/// The raw CAF echo: a detached actor (a thread of its own, as an actor of a mesh is) answering
/// (ping, v) with v + 1, counting ints, and answering (ping) with the count.
inline caf::actor spawn_caf_echo(caf::actor_system& sys) {
  return sys.spawn<caf::detached>([](caf::event_based_actor*) -> caf::behavior {
    auto notes = std::make_shared<long>(0);
    return {[](ping_atom, int v) { return v + 1; }, [notes](int) { ++*notes; }, [notes](ping_atom) { return *notes; }};
  });
}

/// The raw CAF relay: an event-based actor answering (ping, v) with what `next` answers, through
/// request(...).then (CAF's way to await an answer without blocking the actor).
inline caf::actor spawn_caf_relay(caf::actor_system& sys, caf::actor next) {
  return sys.spawn<caf::detached>([next](caf::event_based_actor* self) -> caf::behavior {
    return {[self, next](ping_atom, int v) -> caf::result<int> {
      auto answer = self->make_response_promise<int>();
      self->request(next, caf::infinite, ping_atom::value, v).then([answer](int r) mutable { answer.deliver(r); });
      return answer;
    }};
  });
}

/// Seconds since `start`.
inline double seconds_since(call_clock::time_point start) {
  return std::chrono::duration<double>(call_clock::now() - start).count();
}

} // namespace am::bench
