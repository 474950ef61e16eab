#include "devices/detail/device_actor.hpp"

#include "actors/detail/log.hpp"
#include "actormesh/actors/lane.hpp"
#include "observability/trace_hooks.hpp"
#include "observability/stats_counters.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <deque>
#include <unordered_map>

#include <sched.h>

namespace am::detail {

namespace {

/// Calls `f` on every input shard of a piece of work.
template <class F>
void for_each_input(device_work& work, F&& f) {
  if (auto* p = std::get_if<program_call>(&work))
    for (auto& in : p->inputs)
      f(in);
  else if (auto* fc = std::get_if<fetch_call>(&work))
    f(fc->input);
}

/// Stores `error` in every output of a piece of work.
void fail_outputs(device_work& work, const std::exception_ptr& error) {
  std::visit(
    [&](auto& call) {
      using T = std::decay_t<decltype(call)>;
      if constexpr (std::is_same_v<T, program_call>) {
        for (auto& out : call.outputs)
          out.set_error(error);
      } else {
        call.output.set_error(error);
      }
    },
    work);
}

/// The first input that is not ready yet, or null.
const shard_future* first_pending_input(device_work& work) {
  const shard_future* pending = nullptr;
  for_each_input(work, [&](shard_future& in) {
    if (!pending && !in.ready())
      pending = &in;
  });
  return pending;
}

struct device_state {
  device dev;
  std::unique_ptr<device_executor> executor;
  stop_signal_ptr stop;
  in_order_admission<device_call> admission;
  /// Admitted work held back, per caller and in that caller's order, because the caller's first
  /// held item waits for an input from elsewhere. Per caller, not one queue for the device: a call
  /// only waits for its own caller's earlier calls. One queue let a call that reached this device
  /// early (its caller's batch came first) wait behind another caller's call whose input was queued
  /// on another device behind a call waiting for this one: a cycle that left every device idle.
  std::unordered_map<caller_id, std::deque<device_call>> stalled;
  /// The calls taken from an outbox, being handled (kept to reuse its storage).
  std::deque<device_call> batch;
  stats::device_counters* counters = nullptr; ///< calls run, for am::runtime_stats()
  static inline const char* name = "am.device";
};

using device_actor = caf::stateful_actor<device_state>;

void execute(device_state& st, device_call& call) {
  auto& work = call.work;
  if (st.counters)
    st.counters->executed.fetch_add(1, std::memory_order_relaxed);
  // After stop() every call not yet started fails at once: a batch of queued calls (a caller's whole
  // outbox, taken in one message) must not keep stop() waiting while it runs to the end.
  if (st.stop->raised()) {
    fail_outputs(work, runtime_stopped_error());
    return;
  }
  std::exception_ptr input_error;
  for_each_input(work, [&](shard_future& in) {
    if (!input_error)
      input_error = in.shared_state()->error();
  });
  if (input_error) {
    fail_outputs(work, input_error);
    return;
  }
  try {
    auto traced = observability::device_work_span(st.dev, work, call.header);
    std::visit(
      [&](auto& call) {
        using T = std::decay_t<decltype(call)>;
        if constexpr (std::is_same_v<T, program_call>)
          st.executor->run_program(call);
        else if constexpr (std::is_same_v<T, upload_call>)
          st.executor->upload(call);
        else
          st.executor->fetch(call);
      },
      work);
  } catch (...) {
    fail_outputs(work, std::current_exception());
  }
}

/// Asks to be woken (by a resume message naming the caller) when `pending`, the input that the
/// first stalled item of `caller` waits for, resolves.
void arm_resume(device_actor* self, caller_id caller, const shard_future& pending) {
  caf::actor_addr me = self->address();
  // Runs at once when the input became ready meanwhile (another device resolves it concurrently):
  // the resume message is then already on its way.
  pending.on_ready([me, caller] {
    if (auto hdl = caf::actor_cast<caf::actor>(me))
      caf::anon_send(hdl, resume_atom::value, caller);
  });
}

/// Runs `caller`'s stalled work from the front for as long as its inputs are ready.
void drain(device_actor* self, caller_id caller) {
  auto& st = self->state;
  auto it = st.stalled.find(caller);
  if (it == st.stalled.end())
    return; // a late resume: that caller's work has run
  auto& queue = it->second;
  while (!queue.empty()) {
    // One look at the inputs: asking twice could see a pending input turn ready in between.
    if (const auto* pending = first_pending_input(queue.front().work)) {
      arm_resume(self, caller, *pending);
      return;
    }
    auto call = std::move(queue.front());
    queue.pop_front();
    execute(st, call);
  }
  st.stalled.erase(it);
}

/// Admits one call in its caller's order, then runs it now or parks it behind that caller's
/// stalled work.
void accept(device_actor* self, device_call& call) {
  const auto header = call.header;
  self->state.admission.offer(header, std::move(call), [self, caller = header.caller](device_call& admitted) {
    auto& st = self->state;
    observability::trace_lane(st.dev, "admit", caller);
    auto it = st.stalled.find(caller);
    if (it == st.stalled.end() && first_pending_input(admitted.work) == nullptr) {
      execute(st, admitted);
      return;
    }
    auto& queue = it != st.stalled.end() ? it->second : st.stalled[caller];
    observability::trace_lane(st.dev, "stall", caller);
    queue.push_back(std::move(admitted));
    if (queue.size() == 1)
      drain(self, caller);
  });
}

caf::behavior device_behavior(device_actor* self, device dev,
                              std::shared_ptr<std::unique_ptr<device_executor>> executor, stop_signal_ptr stop,
                              std::uint64_t stats_generation) {
  self->attach_functor([id = dev.id, stats_generation] { stats::device_stopped(id, stats_generation); });
  self->state.dev = dev;
  self->state.stop = std::move(stop);
  self->state.executor = std::move(*executor);
  self->state.counters = stats::device(dev.id);
  // Device threads are batch work: under SCHED_BATCH a device woken by a new call does not preempt
  // the caller that is still dispatching the rest of an operation's shards (with 8 devices on 2
  // cores, wake-up preemption made the caller's cost per 8-shard operation about 4x higher).
  sched_param batch{};
  if (sched_setscheduler(0, SCHED_BATCH, &batch) != 0)
    log(log_level::debug, "{}: SCHED_BATCH not available", to_string(dev));
  caf::actor_addr me = self->address();
  self->state.executor->set_completion_notifier([me](std::uint64_t token) {
    if (auto hdl = caf::actor_cast<caf::actor>(me))
      caf::anon_send(hdl, completed_atom::value, token);
  });
  return {
    [self](device_batch& batch) {
      auto& calls = self->state.batch;
      batch.outbox->take(calls);
      for (auto& call : calls)
        accept(self, call);
      calls.clear();
    },
    [self](resume_atom, caller_id caller) {
      observability::trace_lane(self->state.dev, "resume", caller);
      drain(self, caller);
    },
    [self](completed_atom, std::uint64_t token) { self->state.executor->complete(token); },
  };
}

} // namespace

caf::actor spawn_device_actor(caf::actor_system& system, const device& dev,
                              std::unique_ptr<device_executor> executor, stop_signal_ptr stop) {
  // CAF copies spawn arguments, so the move-only executor travels in a shared holder.
  auto holder = std::make_shared<std::unique_ptr<device_executor>>(std::move(executor));
  log(log_level::debug, "spawning device actor for {}", to_string(dev));
  auto stats_generation = stats::device_started(dev.id, to_string(dev)); // before any call is queued
  return system.spawn<caf::detached>(device_behavior, dev, holder, std::move(stop), stats_generation);
}

} // namespace am::detail
