#include "actor_mesh/detail/user_actor.hpp"

#include "actormesh/actor_mesh/actor_errors.hpp"
#include "actormesh/actor_mesh/detail/actor_self.hpp"
#include "actormesh/actor_mesh/detail/coroutine_call.hpp"

#include "devices/detail/default_device_scope.hpp"
#include "devices/detail/urgent_exit.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <optional>

namespace am::detail {

namespace {

/// A stop request: `done` runs once the instance is destroyed.
struct stop_request {
  std::function<void()> done;
};

/// A failure imposed from outside (the mesh stops on another actor's failure).
struct fail_request {
  std::exception_ptr error;
};

} // namespace
} // namespace am::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(am::detail::stop_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(am::detail::fail_request)

namespace am::detail {

/// The context of the actor running on this thread (this_actor.cpp reads it).
extern thread_local const actor_context* current_actor;

namespace {

using construct_atom = caf::atom_constant<caf::atom("am_ucons")>;
using wake_atom = caf::atom_constant<caf::atom("am_uwake")>;

/// Batches an actor takes from its inbox per wake-up before it lets its mailbox's other messages
/// (a stop, the runtime's exit) in, when callers keep it busy.
constexpr int batches_per_wake = 64;

/// The way back into one actor for its coroutine calls (actor_self.hpp). Holds the cell and the
/// actor weakly: a suspended call must not keep a stopped actor's inbox alive.
class actor_self_impl final : public actor_self {
public:
  actor_self_impl(std::weak_ptr<actor_cell> cell, caf::weak_actor_ptr actor) : cell_(std::move(cell)), actor_(std::move(actor)) {}

  void post(task_ptr task) const override {
    auto cell = cell_.lock();
    if (!cell || cell->halted.load(std::memory_order_relaxed))
      return; // the task goes here, failing its call
    cell->in_flight.fetch_add(1, std::memory_order_relaxed);
    if (!cell->inbox.push(std::move(task)))
      return; // a wake-up is on its way, or the inbox is closed (the task failed at once)
    if (auto actor = actor_.lock())
      send_wake(caf::actor_cast<caf::actor>(actor)); // an actor that exits meanwhile closes the inbox
  }

  void coroutine_started(std::shared_ptr<coroutine_call_base> call) const override {
    if (auto cell = cell_.lock()) {
      cell->coroutine_calls.fetch_add(1, std::memory_order_relaxed);
      cell->coroutines.push_back(std::move(call));
    }
  }

  void coroutine_answered() const override {
    if (auto cell = cell_.lock())
      cell->coroutine_calls.fetch_sub(1, std::memory_order_release);
  }

  void coroutine_finished(const coroutine_call_base* call) const override {
    auto cell = cell_.lock();
    if (!cell)
      return;
    auto& calls = cell->coroutines;
    for (auto it = calls.begin(); it != calls.end(); ++it)
      if (it->get() == call) {
        calls.erase(it); // the step that finished it still holds it
        return;
      }
  }

private:
  std::weak_ptr<actor_cell> cell_;
  caf::weak_actor_ptr actor_;
};

/// The actor whose task runs on this thread (running_actor()).
thread_local const std::shared_ptr<const actor_self>* running_self = nullptr;

/// Sets this thread's current actor for the scope (an endpoint may call another actor inline),
/// and its first device as the default device (where arrays that arrive, and host data put
/// without a device, go).
class context_scope {
public:
  explicit context_scope(const actor_context& context) : saved_(current_actor) {
    current_actor = &context;
    if (!context.point.devices.empty())
      default_device_.emplace(context.point.devices.front());
  }
  ~context_scope() {
    default_device_.reset();
    current_actor = saved_;
  }
  context_scope(const context_scope&) = delete;
  context_scope& operator=(const context_scope&) = delete;

private:
  const actor_context* saved_;
  std::optional<default_device_scope> default_device_;
};

struct user_actor_state {
  std::shared_ptr<actor_cell> cell;
  std::shared_ptr<const actor_self> self;  // what its coroutine calls resume through
  std::optional<stop_request> pending_stop; // a stop waiting for coroutine calls to answer
  std::shared_ptr<const actor_factory> factory;
  std::shared_ptr<void> object;  // the instance, while it lives
  std::exception_ptr failure;    // why tasks are refused, once failed or stopped
  static inline const char* name = "am.user_actor";
};

void construct(user_actor_state& st);

/// The instance failed with `cause`: destroy it, then restart or fail as the mesh decides.
void handle_failure(user_actor_state& st, const std::exception_ptr& cause) {
  {
    context_scope scope(st.cell->context);
    st.object.reset();
  }
  failure_outcome outcome;
  if (auto supervisor = st.cell->supervisor.lock())
    outcome = supervisor->actor_failed(*st.cell, cause);
  else
    outcome.error = cause; // no handle to the mesh remains: nobody can call it any more
  // Coroutine calls suspended on the instance that is gone fail now, not when (or if) what they
  // await arrives.
  abandon_suspended(st.cell->coroutines,
                    outcome.restart ? restarted_under_call(st.cell->context.class_name, st.cell->context.point.rank)
                                    : (outcome.error ? outcome.error : cause));
  if (outcome.restart)
    construct(st); // bounded: the policy counts the restarts
  else
    st.failure = outcome.error ? outcome.error : cause;
}

void construct(user_actor_state& st) {
  std::exception_ptr cause;
  try {
    context_scope scope(st.cell->context);
    st.object = (*st.factory)(st.cell->context.point);
  } catch (...) {
    cause = std::current_exception();
  }
  if (cause)
    handle_failure(st, cause);
}

void run_task(user_actor_state& st, actor_task& task) {
  if (st.failure || !st.object) {
    task.refuse(st.failure);
    return;
  }
  std::exception_ptr thrown;
  {
    context_scope scope(st.cell->context);
    auto* saved = running_self;
    running_self = &st.self;
    thrown = task.run(st.object.get());
    running_self = saved;
  }
  if (!thrown)
    return;
  if (is_actor_fault(thrown)) {
    handle_failure(st, thrown);
    task.refuse(thrown); // after the policy: a later call meets the restarted or stopped actor
  } else if (task.one_way()) {
    if (auto supervisor = st.cell->supervisor.lock())
      supervisor->one_way_failed(*st.cell, thrown);
  }
}

/// Runs (then deletes) every task of the list `batch`, oldest first.
void run_batch(user_actor_state& st, actor_task* batch) {
  while (batch) {
    task_ptr task(batch);
    batch = batch->next_in_inbox;
    if (st.cell->halted.load(std::memory_order_relaxed))
      continue; // the runtime stops: dropped, failing its call
    run_task(st, *task);
    task.reset(); // its promise and arguments go before the count says it is done
    st.cell->in_flight.fetch_sub(1, std::memory_order_relaxed);
  }
}

/// Runs every task queued now (before a stop or an imposed failure takes effect).
void drain(user_actor_state& st) {
  while (auto* batch = st.cell->inbox.take())
    run_batch(st, batch);
}

using user_actor_type = caf::stateful_actor<user_actor_state>;

/// Destroys the instance (on the actor's own thread) and stops.
void stop_now(user_actor_type* self, stop_request& request) {
  auto& st = self->state;
  {
    context_scope scope(st.cell->context);
    st.object.reset();
  }
  if (request.done)
    request.done();
  self->quit();
}

/// A stop that waited for coroutine calls goes on once the last has answered.
void stop_if_due(user_actor_type* self) {
  auto& st = self->state;
  if (!st.pending_stop || st.cell->coroutine_calls.load(std::memory_order_acquire) > 0)
    return;
  auto request = std::move(*st.pending_stop);
  st.pending_stop.reset();
  stop_now(self, request);
}

caf::behavior user_actor(caf::stateful_actor<user_actor_state>* self, std::shared_ptr<actor_cell> cell,
                         std::shared_ptr<const actor_factory> factory) {
  self->state.cell = std::move(cell);
  self->state.factory = std::move(factory);
  self->state.self = std::make_shared<actor_self_impl>(self->state.cell,
                                                       caf::weak_actor_ptr(caf::actor_control_block::from(self)));
  // Killed with tasks still queued (the runtime stops): they fail their calls now, not when the
  // last handle to the mesh goes.
  self->attach_functor([cell = self->state.cell] {
    cell->inbox.close(); // a resumption posted from now on fails its call at once
    // Coroutine calls suspended on it fail too (their frames go here, on the actor's thread).
    abandon_suspended(cell->coroutines, std::make_exception_ptr(runtime_error(
                                          "The actormesh runtime has stopped: the actor was gone before the call finished")));
  });
  return {
    [self](construct_atom) { construct(self->state); },
    [self](wake_atom) {
      auto& st = self->state;
      for (int k = 0; k < batches_per_wake && !st.cell->halted.load(std::memory_order_relaxed); ++k) {
        run_batch(st, st.cell->inbox.take());
        if (st.cell->inbox.rest()) {
          stop_if_due(self);
          return; // idle: the next push wakes it
        }
      }
      self->send(self, wake_atom::value); // still busy: go on after the mailbox's other messages
    },
    [self](fail_request& request) {
      auto& st = self->state;
      drain(st);
      {
        context_scope scope(st.cell->context);
        st.object.reset();
      }
      if (!st.failure)
        st.failure = request.error;
    },
    [self](stop_request& request) {
      auto& st = self->state;
      drain(st);
      if (st.cell->coroutine_calls.load(std::memory_order_acquire) > 0) {
        st.pending_stop = std::move(request); // after the coroutine calls already issued
        return;
      }
      stop_now(self, request);
    },
  };
}

} // namespace

caf::actor spawn_user_actor(caf::actor_system& system, std::shared_ptr<actor_cell> cell,
                            std::shared_ptr<const actor_factory> factory) {
  auto actor = system.spawn<caf::detached>(user_actor, std::move(cell), std::move(factory));
  caf::anon_send(actor, construct_atom::value);
  return actor;
}

std::shared_ptr<const actor_self> running_actor() noexcept {
  return running_self ? *running_self : nullptr;
}

void send_wake(const caf::actor& actor) {
  caf::anon_send(actor, wake_atom::value);
}

void send_fail(const caf::actor& actor, std::exception_ptr error) {
  caf::anon_send(actor, fail_request{std::move(error)});
}

void send_stop(const caf::actor& actor, std::function<void()> done) {
  caf::anon_send(actor, stop_request{std::move(done)});
}

void send_kill(const caf::actor& actor, actor_cell& cell) {
  cell.halted.store(true, std::memory_order_relaxed);
  send_urgent_exit(actor);
}

} // namespace am::detail
