/// Actor meshes: a user's C++ class whose instances are actors, one per point of a layout of
/// processes or devices, called through typed endpoints (Monarch's actor meshes, in C++).
///
///     struct counter {
///       explicit counter(int start) : n(start) {}
///       int add(int k) { return n += k; }
///       int n;
///     };
///     const auto counter_class = am::actor_class<counter>("counter").endpoint("add", &counter::add);
///     auto counters = counter_class.spawn(am::actor_layout::per_device(), 10); // one per device
///     am::mesh_values<int> all = counters.call(&counter::add, 1).get();      // every actor
///     int one = counters.slice("host", 0).slice("device", 1).call_one(&counter::add, 5).get();
///
/// Each actor runs on a thread of its own (an endpoint may block), one message at a time, so the
/// class needs no lock. doc/actor_meshes.md is the tour.
#ifndef ACTORMESH_ACTOR_MESH_ACTOR_MESH_HPP
#define ACTORMESH_ACTOR_MESH_ACTOR_MESH_HPP

#include "actormesh/actor_mesh/actor_errors.hpp"
#include "actormesh/actor_mesh/actor_layout.hpp"
#include "actormesh/actor_mesh/detail/actor_constructor.hpp"
#include "actormesh/sharding/detail/array_wire.hpp"
#include "actormesh/actor_mesh/detail/class_registry.hpp"
#include "actormesh/actor_mesh/detail/endpoint_task.hpp"
#include "actormesh/actor_mesh/detail/endpoint_traits.hpp"
#include "actormesh/actor_mesh/detail/mesh_core.hpp"
#include "actormesh/actor_mesh/detail/remote_endpoint_task.hpp"
#include "actormesh/actor_mesh/mesh_values.hpp"
#include "actormesh/actor_mesh/supervision.hpp"
#include "actormesh/actor_mesh/this_actor.hpp"
#include "actormesh/actors/future.hpp"
#include "actormesh/actors/value_wire.hpp"
#include "actormesh/colocated/detail/constructor_wire.hpp"
#include "actormesh/sharding/detail/host_array_wire.hpp"

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <utility>
#include <vector>

namespace am {

template <class T>
class actor_class;

/// A mesh of T actors, or a slice of one. Copies share the actors; when the last handle to a
/// spawned mesh (and to its slices) goes, its actors stop after the calls already issued. Every
/// call form is thread-safe; each calling thread's messages to one actor arrive in the order sent.
template <class T>
class actor_mesh {
public:
  /// The layout of this mesh (its axes and points; a point's rank is its rank in the spawned mesh).
  const actor_layout& layout() const noexcept { return layout_; }

  /// The number of actors.
  std::size_t size() const noexcept { return layout_.size(); }

  /// Calls endpoint `pm` on the one actor of this mesh (am::value_error unless it has exactly one).
  template <class M, class... A>
  future<typename detail::endpoint_traits<M>::result> call_one(M pm, A&&... args) const {
    if (layout_.size() != 1)
      throw value_error("call_one on an actor mesh of shape " + layout_.shape_string() + " ("
                        + std::to_string(layout_.size()) + " actors); slice it to one actor first");
    return call_rank(layout_.points()[0].rank, pm, std::forward<A>(args)...);
  }

  /// Calls endpoint `pm` on every actor; the answers come shaped like this mesh (mesh_values), or
  /// the error of the lowest rank that failed once every actor has answered. A void endpoint gives
  /// a future<void>.
  template <class M, class... A>
  auto call(M pm, A&&... args) const {
    using R = typename detail::endpoint_traits<M>::result;
    const auto& endpoint = endpoint_of(pm);
    auto all = std::make_shared<detail::gathering<R>>(layout_.axis_names(), layout_.axis_sizes(), layout_.size());
    auto done = all->get_future();
    if (layout_.size() == 1) {
      post(layout_.points()[0].rank, pm, endpoint, arguments_for(pm, std::forward<A>(args)...), detail::gather_sink<R>{all, 0});
      return done;
    }
    auto shared = shared_arguments_for(pm, std::forward<A>(args)...);
    for (std::size_t k = 0; k < layout_.size(); ++k)
      post(layout_.points()[k].rank, pm, endpoint, shared, detail::gather_sink<R>{all, k});
    return done;
  }

  /// Sends endpoint `pm` to every actor without waiting for an answer. An exception it throws goes
  /// to this mesh's owner as a supervision event (broadcast_failed); nothing is lost silently.
  template <class M, class... A>
  void broadcast(M pm, A&&... args) const {
    const auto& endpoint = endpoint_of(pm);
    if (layout_.size() == 1) {
      post(layout_.points()[0].rank, pm, endpoint, arguments_for(pm, std::forward<A>(args)...), detail::one_way_sink{});
      return;
    }
    auto shared = shared_arguments_for(pm, std::forward<A>(args)...);
    for (auto& point : layout_.points())
      post(point.rank, pm, endpoint, shared, detail::one_way_sink{});
  }

  /// Calls endpoint `pm` on the one actor of this mesh with the fewest calls queued or running.
  template <class M, class... A>
  future<typename detail::endpoint_traits<M>::result> choose(M pm, A&&... args) const {
    std::vector<int> ranks;
    ranks.reserve(layout_.size());
    for (auto& point : layout_.points())
      ranks.push_back(point.rank);
    return call_rank(detail::least_loaded(*core_, ranks), pm, std::forward<A>(args)...);
  }

  /// The actors where `axis` is `index`, without that axis.
  actor_mesh slice(const std::string& axis, std::int64_t index) const { return actor_mesh(core_, endpoints_, layout_.slice(axis, index)); }

  /// The actors where `axis` is in [begin, end).
  actor_mesh slice(const std::string& axis, std::int64_t begin, std::int64_t end) const {
    return actor_mesh(core_, endpoints_, layout_.slice(axis, begin, end));
  }

  /// Stops every actor of the spawned mesh (not only this slice's) after the calls already issued;
  /// later calls fail with am::actor_failure_error. The future is ready once every instance is
  /// destroyed.
  future<void> stop() const { return detail::stop_mesh(*core_); }

  /// Tells `callback` every supervision event of the spawned mesh from now on (on the failing
  /// actor's thread: it must be short and must not block).
  void on_supervision(std::function<void(const supervision_event&)> callback) const {
    detail::on_supervision(*core_, std::move(callback));
  }

  /// Every supervision event of the spawned mesh so far.
  std::vector<supervision_event> supervision_events() const { return detail::supervision_events(*core_); }

private:
  friend class actor_class<T>;

  actor_mesh(std::shared_ptr<detail::mesh_core> core, std::shared_ptr<const std::vector<detail::endpoint_entry>> endpoints,
             actor_layout layout)
      : core_(std::move(core)), endpoints_(std::move(endpoints)), layout_(std::move(layout)) {}

  /// The call's arguments, converted to the endpoint's parameter types (checked against them at
  /// compile time).
  template <class M, class... A>
  typename detail::endpoint_traits<M>::arguments arguments_for(M, A&&... args) const {
    using traits = detail::endpoint_traits<M>;
    using arguments = typename traits::arguments;
    static_assert(std::is_base_of_v<typename traits::owner, T>, "this member function is not a member of the mesh's class");
    static_assert(traits::parameters_by_value_or_const_ref,
                  "an endpoint takes its parameters by value or by const reference");
    static_assert(std::is_constructible_v<arguments, A&&...>, "the arguments do not match the endpoint's parameters");
    return arguments(std::forward<A>(args)...);
  }

  /// The same, converted once and shared by every actor the call goes to.
  template <class M, class... A>
  std::shared_ptr<const typename detail::endpoint_traits<M>::arguments> shared_arguments_for(M pm, A&&... args) const {
    using arguments = typename detail::endpoint_traits<M>::arguments;
    return std::make_shared<const arguments>(arguments_for(pm, std::forward<A>(args)...));
  }

  /// The registered name of endpoint `pm`; am::value_error when it is not one of T's.
  template <class M>
  const std::string& endpoint_of(M pm) const {
    return detail::endpoint_name(detail::class_name_of(*core_), *endpoints_, std::type_index(typeid(M)),
                                 detail::member_bytes(pm));
  }

  /// Sends one call to the actor of `rank`: a task queued at it in this process, or the encoded
  /// arguments to its process, whose encoded answer `sink` is given decoded.
  template <class M, class Holder, class Sink>
  void post(int rank, M pm, const std::string& endpoint, Holder holder, Sink sink) const {
    using traits = detail::endpoint_traits<M>;
    using R = typename traits::result;
    using arguments = typename traits::arguments;
    if (detail::is_local(*core_, rank)) {
      using task = detail::endpoint_task<T, M, R, Holder, Sink>;
      detail::post(*core_, rank, std::make_unique<task>(pm, std::move(holder), std::move(sink)));
      return;
    }
    if constexpr (detail::travels<arguments> && (std::is_void_v<R> || detail::travels<R>)) {
      detail::wire_writer w;
      detail::write_value(w, detail::arguments_of(holder));
      detail::answer_callback answer;
      if constexpr (!Sink::one_way())
        answer = [sink](const std::exception_ptr& error, const std::string& value) mutable {
          if (error) {
            sink.set_error(error);
            return;
          }
          try {
            if constexpr (std::is_void_v<R>) {
              sink.set_value();
            } else {
              detail::wire_reader r(value);
              auto decoded = detail::read_value<R>(r);
              r.finish();
              sink.set_value(std::move(decoded));
            }
          } catch (...) {
            sink.set_error(std::current_exception());
          }
        };
      detail::post_remote(*core_, rank, endpoint, w.take(), std::move(answer));
    } else {
      sink.set_error(std::make_exception_ptr(type_error(
        "endpoint '" + endpoint + "' of actor class '" + detail::class_name_of(*core_)
        + "' takes or returns a type that cannot travel to another process (give it an inspect overload)")));
    }
  }

  template <class M, class... A>
  future<typename detail::endpoint_traits<M>::result> call_rank(int rank, M pm, A&&... args) const {
    using R = typename detail::endpoint_traits<M>::result;
    const auto& endpoint = endpoint_of(pm);
    detail::promise_sink<R> sink;
    auto answer = sink.result.get_future();
    post(rank, pm, endpoint, arguments_for(pm, std::forward<A>(args)...), std::move(sink));
    return answer;
  }

  std::shared_ptr<detail::mesh_core> core_;
  std::shared_ptr<const std::vector<detail::endpoint_entry>> endpoints_;
  actor_layout layout_;
};

/// An actor class: T registered by name with its endpoints and its supervision policy. Copies
/// share the registration. Register at namespace scope (or before spawning), in every process of
/// the program, as colocated classes are.
template <class T>
class actor_class {
public:
  /// Registers the class name; throws am::value_error when it is taken.
  explicit actor_class(const std::string& name) : info_(detail::register_actor_class(name)) {}

  /// Registers member function `pm` as endpoint `name` (parameters by value or const reference);
  /// throws am::value_error when the name or the function is taken.
  template <class M>
  actor_class endpoint(const std::string& name, M pm) const {
    static_assert(std::is_member_function_pointer_v<M>, "endpoint: pass a member function, e.g. &T::step");
    using traits = detail::endpoint_traits<M>;
    static_assert(std::is_base_of_v<typename traits::owner, T>, "endpoint: a member function of the actor's class");
    static_assert(traits::parameters_by_value_or_const_ref,
                  "endpoint: an endpoint takes its parameters by value or by const reference");
    detail::add_endpoint(*info_, detail::endpoint_entry{name, std::type_index(typeid(M)), detail::member_bytes(pm),
                                                        remote_task_for(name, pm)});
    return *this;
  }

  /// A copy of this class with supervision policy `policy` for the meshes it spawns from now on.
  actor_class supervise(supervision_policy policy) const {
    actor_class copy = *this;
    copy.policy_ = policy;
    return copy;
  }

  /// Spawns one T per point of `layout`, each constructed on its own actor's thread from `args`
  /// (copied; C strings as std::string), with the point first when T takes `const am::actor_point&`
  /// before them. A constructor that throws fails that actor (its policy decides what follows).
  /// On a single-controller cluster's controller, the points in workers' processes are built there
  /// from the arguments' encoding (their types must travel, else am::type_error).
  template <class... A>
  actor_mesh<T> spawn(const actor_layout& layout, A&&... args) const {
    using constructor = detail::actor_constructor<T, detail::recorded_argument<A>...>;
    static_assert(constructor::constructible, "actor_class::spawn: T cannot be constructed from these arguments");
    auto recorded = std::make_shared<const std::tuple<detail::recorded_argument<A>...>>(std::forward<A>(args)...);
    auto endpoints = detail::endpoints_of(*info_);
    auto core = detail::spawn_mesh(info_->name, layout, constructor::factory(recorded), policy_, endpoints,
                                   constructor::remote(recorded));
    return actor_mesh<T>(core, std::move(endpoints), detail::spawned_layout(*core));
  }

  /// The registered name.
  const std::string& name() const noexcept { return info_->name; }

private:
  /// How a call from another process runs endpoint `pm`: a task that decodes the arguments on the
  /// actor's thread, calls, and encodes the answer.
  template <class M>
  detail::remote_task_factory remote_task_for(const std::string& name, M pm) const {
    using traits = detail::endpoint_traits<M>;
    using R = typename traits::result;
    using arguments = typename traits::arguments;
    return [pm, name, class_name = info_->name](std::string encoded, detail::remote_reply reply, bool one_way) -> detail::task_ptr {
      if constexpr (detail::travels<arguments> && (std::is_void_v<R> || detail::travels<R>)) {
        return std::make_unique<detail::remote_endpoint_task<T, M>>(pm, std::move(encoded),
                                                                    detail::remote_sink<R>{std::move(reply), one_way});
      } else {
        throw type_error("endpoint '" + name + "' of actor class '" + class_name
                         + "' takes or returns a type that cannot travel to another process");
      }
    };
  }

  std::shared_ptr<detail::actor_class_info> info_;
  supervision_policy policy_;
};

} // namespace am

#endif // ACTORMESH_ACTOR_MESH_ACTOR_MESH_HPP
