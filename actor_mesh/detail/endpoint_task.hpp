/// The typed tasks behind call_one, call, choose and broadcast: each runs one endpoint with the
/// call's arguments and hands the result to a sink (one promise, one slot of a gather, or nobody).
/// Internal.
#ifndef ACTORMESH_ACTOR_MESH_DETAIL_ENDPOINT_TASK_HPP
#define ACTORMESH_ACTOR_MESH_DETAIL_ENDPOINT_TASK_HPP

#include "actormesh/actor_mesh/actor_errors.hpp"
#include "actormesh/actor_mesh/detail/actor_task.hpp"
#include "actormesh/actor_mesh/detail/call_arguments.hpp"
#include "actormesh/actor_mesh/detail/coroutine_call.hpp"
#include "actormesh/actor_mesh/detail/endpoint_traits.hpp"
#include "actormesh/actor_mesh/mesh_values.hpp"
#include "actormesh/actors/future.hpp"

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace am::detail {

/// The answer of one actor: one promise.
template <class R>
struct promise_sink {
  promise<R> result;
  static constexpr bool one_way() noexcept { return false; }
  template <class... V>
  void set_value(V&&... v) { result.set_value(std::forward<V>(v)...); }
  void set_error(const std::exception_ptr& e) { result.set_error(e); }
};

/// The answers of every actor of a call, gathered into one future shaped like the mesh: it is
/// resolved when the last answer comes, with the values, or with the error of the lowest rank
/// that failed.
template <class R>
class gathering {
public:
  using value_type = std::conditional_t<std::is_void_v<R>, void, mesh_values<R>>;

  gathering(std::vector<std::string> names, std::vector<std::int64_t> sizes, std::size_t count)
      : names_(std::move(names)), sizes_(std::move(sizes)), slots_(count), errors_(count), remaining_(count) {
    if (count == 0)
      complete();
  }

  future<value_type> get_future() { return done_.get_future(); }

  template <class... V>
  void set_value(std::size_t k, V&&... v) {
    if constexpr (!std::is_void_v<R>)
      slots_[k].emplace(std::forward<V>(v)...);
    finish_one();
  }

  void set_error(std::size_t k, const std::exception_ptr& e) {
    errors_[k] = e;
    finish_one();
  }

private:
  struct nothing {};
  using slot = std::conditional_t<std::is_void_v<R>, nothing, std::optional<std::conditional_t<std::is_void_v<R>, int, R>>>;

  void finish_one() {
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1)
      complete();
  }

  void complete() {
    for (auto& e : errors_)
      if (e) {
        done_.set_error(e);
        return;
      }
    if constexpr (std::is_void_v<R>) {
      done_.set_value();
    } else {
      std::vector<R> values;
      values.reserve(slots_.size());
      for (auto& s : slots_)
        values.push_back(std::move(*s));
      done_.set_value(mesh_values<R>(std::move(names_), std::move(sizes_), std::move(values)));
    }
  }

  std::vector<std::string> names_;
  std::vector<std::int64_t> sizes_;
  std::vector<slot> slots_;
  std::vector<std::exception_ptr> errors_;
  std::atomic<std::size_t> remaining_;
  promise<value_type> done_;
};

/// One actor's slot of a gathering.
template <class R>
struct gather_sink {
  std::shared_ptr<gathering<R>> all;
  std::size_t k = 0;
  static constexpr bool one_way() noexcept { return false; }
  template <class... V>
  void set_value(V&&... v) { all->set_value(k, std::forward<V>(v)...); }
  void set_error(const std::exception_ptr& e) { all->set_error(k, e); }
};

/// Nobody waits (broadcast): an exception goes to the mesh's owner as a supervision event.
struct one_way_sink {
  static constexpr bool one_way() noexcept { return true; }
  template <class... V>
  void set_value(V&&...) {}
  void set_error(const std::exception_ptr&) {}
};

/// Runs member function `pm` of a T with the call's arguments, answering `sink`.
template <class T, class M, class R, class Holder, class Sink>
class endpoint_task final : public actor_task {
public:
  endpoint_task(M pm, Holder args, Sink sink) : pm_(pm), args_(std::move(args)), sink_(std::move(sink)) {}

  /// A task dropped unrun (its actor was killed with the runtime) fails its call.
  ~endpoint_task() override {
    if (!answered_)
      sink_.set_error(std::make_exception_ptr(
        runtime_error("The actormesh runtime has stopped: the actor was gone before the call ran")));
  }

  endpoint_task(const endpoint_task&) = delete;
  endpoint_task& operator=(const endpoint_task&) = delete;

  std::exception_ptr run(void* instance) noexcept override {
    answered_ = true;
    if constexpr (endpoint_traits<M>::coroutine) {
      // The call outlives this task: it takes the arguments and the sink with it.
      std::shared_ptr<coroutine_call<T, M, R, Holder, Sink>> call;
      try {
        call = std::make_shared<coroutine_call<T, M, R, Holder, Sink>>(pm_, std::move(args_), std::move(sink_));
      } catch (...) {
        sink_.set_error(std::current_exception());
        return nullptr;
      }
      call_ = call;
      return call->start(instance);
    } else {
      try {
        auto* self = static_cast<T*>(instance);
        auto invoke = [&](const auto&... a) -> decltype(auto) { return (self->*pm_)(a...); };
        if constexpr (std::is_void_v<R>) {
          std::apply(invoke, arguments_of(args_));
          sink_.set_value();
        } else {
          sink_.set_value(std::apply(invoke, arguments_of(args_)));
        }
        return nullptr;
      } catch (const actor_fault&) {
        return std::current_exception(); // the actor fails the call with it, after its policy
      } catch (...) {
        auto e = std::current_exception();
        sink_.set_error(e);
        return sink_.one_way() ? e : nullptr;
      }
    }
  }

  void refuse(const std::exception_ptr& error) noexcept override {
    answered_ = true;
    if (call_)
      call_->abandon(error); // a coroutine call that faulted: answered after the actor's policy
    else
      sink_.set_error(error);
  }

  bool one_way() const noexcept override { return sink_.one_way(); }

private:
  M pm_;
  Holder args_;
  Sink sink_;
  std::shared_ptr<coroutine_call_base> call_; ///< a coroutine endpoint's call, once started
  bool answered_ = false;
};

} // namespace am::detail

#endif // ACTORMESH_ACTOR_MESH_DETAIL_ENDPOINT_TASK_HPP
