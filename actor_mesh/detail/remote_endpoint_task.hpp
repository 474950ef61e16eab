/// A call from another process, as its actor here runs it: decode the arguments on the actor's
/// thread, run the endpoint as a local call would (a coroutine endpoint included), encode the
/// answer. A malformed argument encoding fails that call with am::value_error and nothing else.
/// Internal.
#ifndef ACTORMESH_ACTOR_MESH_DETAIL_REMOTE_ENDPOINT_TASK_HPP
#define ACTORMESH_ACTOR_MESH_DETAIL_REMOTE_ENDPOINT_TASK_HPP

#include "actormesh/actor_mesh/detail/class_registry.hpp"
#include "actormesh/actor_mesh/detail/endpoint_task.hpp"
#include "actormesh/actor_mesh/detail/endpoint_traits.hpp"
#include "actormesh/actors/value_wire.hpp"

#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace am::detail {

/// The answer of a call from another process: encoded and sent back by `reply`.
template <class R>
struct remote_sink {
  remote_reply reply;
  bool is_one_way = false;

  bool one_way() const noexcept { return is_one_way; }
  template <class... V>
  void set_value(V&&... v) {
    std::string bytes;
    try {
      wire_writer w;
      if constexpr (!std::is_void_v<R>)
        write_value(w, std::forward<V>(v)...);
      bytes = w.take();
    } catch (...) {
      reply(std::current_exception(), {});
      return;
    }
    reply(nullptr, std::move(bytes));
  }
  void set_error(const std::exception_ptr& e) { reply(e, {}); }
};

/// Runs member function `pm` of a T for a call whose arguments arrive encoded.
template <class T, class M>
class remote_endpoint_task final : public actor_task {
  using traits = endpoint_traits<M>;
  using R = typename traits::result;
  using arguments = typename traits::arguments;
  using local_task = endpoint_task<T, M, R, arguments, remote_sink<R>>;

public:
  remote_endpoint_task(M pm, std::string encoded, remote_sink<R> sink)
      : pm_(pm), encoded_(std::move(encoded)), sink_(std::move(sink)) {}

  /// Dropped unrun (the runtime stopped): still answers (a started call answers by itself).
  ~remote_endpoint_task() override {
    if (!answered_)
      sink_.set_error(std::make_exception_ptr(
        runtime_error("The actormesh runtime has stopped: the actor was gone before the call ran")));
  }

  remote_endpoint_task(const remote_endpoint_task&) = delete;
  remote_endpoint_task& operator=(const remote_endpoint_task&) = delete;

  std::exception_ptr run(void* instance) noexcept override {
    answered_ = true;
    try {
      wire_reader r(encoded_);
      auto args = read_value<arguments>(r);
      r.finish();
      call_.emplace(pm_, std::move(args), std::move(sink_));
    } catch (...) {
      auto e = std::current_exception();
      sink_.set_error(e);
      return sink_.one_way() ? e : nullptr;
    }
    return call_->run(instance);
  }

  void refuse(const std::exception_ptr& error) noexcept override {
    answered_ = true;
    if (call_)
      call_->refuse(error);
    else
      sink_.set_error(error);
  }

  bool one_way() const noexcept override { return sink_.one_way(); }

private:
  M pm_;
  std::string encoded_;
  remote_sink<R> sink_;
  std::optional<local_task> call_;
  bool answered_ = false;
};

} // namespace am::detail

#endif // ACTORMESH_ACTOR_MESH_DETAIL_REMOTE_ENDPOINT_TASK_HPP
