#include "devices/detail/host_actor.hpp"

#include "actors/detail/log.hpp"
#include "actormesh/actors/lane.hpp"
#include "actors/detail/messages.hpp"
#include "observability/trace_hooks.hpp"
#include "observability/stats_counters.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <unordered_map>

namespace am::detail {

namespace {

/// Runs the tasks of one caller, one after the other, on its own thread. (Spawned with the caller's
/// id: besides naming the lane in logs, an argument avoids CAF 0.17's null-tuple dereference for
/// argument-less function actors, which UBSan reports.)
caf::behavior lane_worker(caf::event_based_actor* self, caller_id caller, stop_signal_ptr stop,
                          std::shared_ptr<stats::lane_counters> counters) {
  log(log_level::trace, "host lane worker for caller {} started", caller);
  self->attach_functor([counters] { counters->retired.store(true, std::memory_order_relaxed); });
  return {
    [stop, counters](host_call& call) {
      // A task dropped unrun fails its future (its promise breaks); it must not delay stop().
      if (!stop->raised()) {
        counters->running.store(true, std::memory_order_relaxed);
        host_task_scope running(stop.get());
        auto traced = observability::host_task_span(call.header.caller);
        call.task();
        counters->running.store(false, std::memory_order_relaxed);
      }
      counters->done.fetch_add(1, std::memory_order_relaxed);
    },
    // Its caller is gone; the tasks it sent are ahead in this mailbox and have run.
    [self](host_lane_retire&) { self->quit(); },
  };
}

struct host_state {
  in_order_admission<host_call> admission;
  std::unordered_map<caller_id, caf::actor> lanes;
  std::unordered_map<caller_id, std::shared_ptr<stats::lane_counters>> lane_counters; ///< for runtime_stats()
  stop_signal_ptr stop;
  static inline const char* name = "am.host";
};

caf::behavior host_behavior(caf::stateful_actor<host_state>* self, int process_index, stop_signal_ptr stop) {
  self->state.stop = std::move(stop);
  log(log_level::debug, "host actor of process {} started", process_index);
  auto lane_of = [self](caller_id caller) -> caf::actor& {
    auto& lane = self->state.lanes[caller];
    if (!lane) {
      auto& counters = self->state.lane_counters[caller];
      counters = stats::open_lane(caller);
      lane = self->spawn<caf::detached + caf::linked>(lane_worker, caller, self->state.stop, counters);
      log(log_level::debug, "host: new lane for caller {}", caller);
    }
    return lane;
  };
  return {
    [self, lane_of](host_call& call) {
      auto header = call.header;
      self->state.admission.offer(header, std::move(call),
                                  [self, lane_of](host_call& ready) {
                                    auto& lane = lane_of(ready.header.caller);
                                    self->state.lane_counters[ready.header.caller]->queued.fetch_add(1, std::memory_order_relaxed);
                                    self->send(lane, std::move(ready));
                                  });
    },
    [lane_of](host_lane_request& request) { request.lane.set_value(lane_of(request.caller)); },
    [self](host_lane_retire& retire) {
      auto it = self->state.lanes.find(retire.caller);
      if (it == self->state.lanes.end())
        return;
      // The caller's tasks reached the lane worker before this (sent to it directly before the
      // caller retired, or forwarded by this actor before this message came): it runs them first.
      self->send(it->second, retire);
      self->state.lanes.erase(it);
      self->state.lane_counters.erase(retire.caller);
      self->state.admission.forget(retire.caller);
    },
  };
}

} // namespace

caf::actor spawn_host_actor(caf::actor_system& system, int process_index, stop_signal_ptr stop) {
  return system.spawn(host_behavior, process_index, std::move(stop));
}

} // namespace am::detail
