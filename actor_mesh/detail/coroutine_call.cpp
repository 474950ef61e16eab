#include "actormesh/actor_mesh/detail/coroutine_call.hpp"

#include "actormesh/actor_mesh/actor_errors.hpp"

namespace am::detail {

void coroutine_call_base::resume_later(std::coroutine_handle<> h) {
  auto self = std::static_pointer_cast<coroutine_call_base>(shared_from_this());
  actor_->post(std::make_unique<resume_task>(std::move(self), h));
}

std::exception_ptr coroutine_call_base::begin(std::coroutine_handle<> top) {
  actor_ = running_actor();
  if (!actor_) { // only a user actor runs endpoint tasks
    answered_ = true;
    deliver_error(std::make_exception_ptr(runtime_error("a coroutine endpoint ran outside its actor")));
    return nullptr;
  }
  actor_->coroutine_started(std::static_pointer_cast<coroutine_call_base>(shared_from_this()));
  if (!top)
    return finish();
  return step(top);
}

std::exception_ptr coroutine_call_base::step(std::coroutine_handle<> h) {
  if (answered())
    return nullptr; // abandoned while this step waited in the inbox (a restart, a failure, the
                    // actor's exit): its frame may be gone
  {
    resume_home_scope scope(this);
    h.resume();
  }
  return finished() ? finish() : nullptr;
}

std::exception_ptr coroutine_call_base::finish() {
  auto error = result_error();
  if (error && is_actor_fault(error))
    return error; // the actor applies its policy, then answers with abandon()
  actor_->coroutine_finished(this);
  if (!claim_answer())
    return nullptr;
  if (!error) {
    try {
      deliver_value();
    } catch (...) {
      error = std::current_exception();
    }
  }
  if (error)
    deliver_error(error);
  return error && one_way_ ? error : nullptr;
}

void coroutine_call_base::abandon(const std::exception_ptr& error) noexcept {
  if (claim_answer())
    deliver_error(error);
}

bool coroutine_call_base::claim_answer() noexcept {
  if (answered_.exchange(true, std::memory_order_acq_rel))
    return false;
  if (actor_)
    actor_->coroutine_answered();
  return true;
}

std::exception_ptr restarted_under_call(const std::string& class_name, int rank) {
  return std::make_exception_ptr(actor_failure_error("actor of class '" + class_name + "' at rank " + std::to_string(rank)
                                                       + " was restarted while this call awaited: the instance it ran on is gone",
                                                     rank));
}

void abandon_suspended(std::vector<std::shared_ptr<coroutine_call_base>>& calls, const std::exception_ptr& error) {
  auto taken = std::move(calls);
  calls.clear();
  for (auto& call : taken) {
    if (call->has_finished())
      continue; // the call that faulted: its task answers it after the policy
    call->abandon(error);
    call->release_frame();
  }
}

resume_task::~resume_task() {
  if (!done_)
    call_->abandon(std::make_exception_ptr(
      runtime_error("The actormesh runtime has stopped: the actor was gone before the call finished")));
}

std::exception_ptr resume_task::run(void*) noexcept {
  done_ = true;
  try {
    return call_->step(h_);
  } catch (...) { // only the bookkeeping around the step can throw (the coroutine's own exceptions are kept)
    call_->abandon(std::current_exception());
    return nullptr;
  }
}

void resume_task::refuse(const std::exception_ptr& error) noexcept {
  done_ = true;
  call_->abandon(error);
}

} // namespace am::detail
