#include "actor_mesh/detail/user_actor.hpp"

#include "actor_mesh/actor_errors.hpp"

#include "devices/detail/urgent_exit.hpp"

#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

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

/// Sets this thread's current actor for the scope (an endpoint may call another actor inline).
class context_scope {
public:
  explicit context_scope(const actor_context& context) : saved_(current_actor) { current_actor = &context; }
  ~context_scope() { current_actor = saved_; }
  context_scope(const context_scope&) = delete;
  context_scope& operator=(const context_scope&) = delete;

private:
  const actor_context* saved_;
};

struct user_actor_state {
  std::shared_ptr<actor_cell> cell;
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

/// True when `e` is an am::actor_fault.
bool is_fault(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const actor_fault&) {
    return true;
  } catch (...) {
    return false;
  }
}

void run_task(user_actor_state& st, actor_task& task) {
  if (st.failure || !st.object) {
    task.refuse(st.failure);
    return;
  }
  std::exception_ptr thrown;
  {
    context_scope scope(st.cell->context);
    thrown = task.run(st.object.get());
  }
  if (!thrown)
    return;
  if (is_fault(thrown)) {
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

caf::behavior user_actor(caf::stateful_actor<user_actor_state>* self, std::shared_ptr<actor_cell> cell,
                         std::shared_ptr<const actor_factory> factory) {
  self->state.cell = std::move(cell);
  self->state.factory = std::move(factory);
  // Killed with tasks still queued (the runtime stops): they fail their calls now, not when the
  // last handle to the mesh goes.
  self->attach_functor([cell = self->state.cell] { cell->inbox.drop_all(); });
  return {
    [self](construct_atom) { construct(self->state); },
    [self](wake_atom) {
      auto& st = self->state;
      for (int k = 0; k < batches_per_wake && !st.cell->halted.load(std::memory_order_relaxed); ++k) {
        run_batch(st, st.cell->inbox.take());
        if (st.cell->inbox.rest())
          return; // idle: the next push wakes it
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
      {
        context_scope scope(st.cell->context);
        st.object.reset(); // the destructor runs here, on the actor's own thread
      }
      if (request.done)
        request.done();
      self->quit();
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
