/// A call from another process, as its actor here runs it: the endpoint's remote invoker with the
/// encoded arguments, the answer (or the exception's type and text) sent back by `reply`.
/// Internal; only .cpp files include it.
#pragma once

#include "actor_mesh/actor_errors.hpp"
#include "actor_mesh/detail/actor_task.hpp"
#include "actor_mesh/detail/actor_wire.hpp"
#include "actor_mesh/detail/class_registry.hpp"

#include <functional>
#include <string>
#include <utility>

namespace am::detail {

class remote_call_task final : public actor_task {
public:
  remote_call_task(remote_invoker invoke, actor_call call, std::function<void(const actor_answer&)> reply)
      : invoke_(std::move(invoke)), call_(std::move(call)), reply_(std::move(reply)) {}

  /// A task dropped unrun (the runtime stopped) still answers.
  ~remote_call_task() override {
    if (!answered_)
      reply_(error_answer(call_.request, std::make_exception_ptr(runtime_error(
                                           "The actormesh runtime has stopped: the actor was gone before the call ran"))));
  }

  remote_call_task(const remote_call_task&) = delete;
  remote_call_task& operator=(const remote_call_task&) = delete;

  std::exception_ptr run(void* instance) noexcept override {
    answered_ = true;
    std::exception_ptr thrown;
    try {
      actor_answer answer;
      answer.request = call_.request;
      answer.ok = true;
      answer.value = invoke_(instance, call_.arguments);
      reply_(answer);
      return nullptr;
    } catch (const actor_fault&) {
      return std::current_exception(); // the actor answers with it (refuse), after its policy
    } catch (...) {
      thrown = std::current_exception();
    }
    reply_(error_answer(call_.request, thrown));
    return one_way() ? thrown : nullptr;
  }

  void refuse(const std::exception_ptr& error) noexcept override {
    answered_ = true;
    reply_(error_answer(call_.request, error));
  }

  bool one_way() const noexcept override { return call_.request == 0; }

private:
  remote_invoker invoke_;
  actor_call call_;
  std::function<void(const actor_answer&)> reply_;
  bool answered_ = false;
};

} // namespace am::detail
