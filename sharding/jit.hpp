/// jit: trace a function of arrays once per input signature (shapes, dtypes, shardings) into one
/// staged plan of per-shard programs, cache it, and run each later call as one message per shard
/// and stage. The function takes `const am::array&` arguments and returns an am::array, a
/// std::vector<am::array> or a std::tuple of arrays.
#ifndef ACTORMESH_SHARDING_JIT_HPP
#define ACTORMESH_SHARDING_JIT_HPP

#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/detail/array_arguments.hpp"
#include "actormesh/sharding/detail/trace.hpp"

#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace am {

namespace detail {

/// Flattens a traced function's result into arrays.
inline std::vector<array> flatten_result(const array& a) { return {a}; }
inline std::vector<array> flatten_result(const std::vector<array>& v) { return v; }
template <class... Ts>
std::vector<array> flatten_result(const std::tuple<Ts...>& t) {
  return std::apply([](const auto&... a) { return std::vector<array>{a...}; }, t);
}

/// Rebuilds the user's result type from arrays.
template <class R>
R unflatten_result(std::vector<array> v) {
  if constexpr (std::is_same_v<R, array>) {
    return v.at(0);
  } else if constexpr (std::is_same_v<R, std::vector<array>>) {
    return v;
  } else {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return R{v.at(I)...};
    }(std::make_index_sequence<std::tuple_size_v<R>>{});
  }
}

} // namespace detail

/// A jitted function: call it like the original.
template <class F>
class jitted {
public:
  /// Wraps `f`; nothing is traced until the first call.
  explicit jitted(F f, std::string name = "jit")
    : f_(std::move(f)), cache_(std::make_shared<detail::plan_cache>(std::move(name))) {}

  /// Runs the cached plan for these arguments' signature, tracing `f` first on a miss. Each
  /// argument is an am::array, an am::host_array or a scalar (int32 / float32 / bool, as JAX takes
  /// Python's), host data put on the default device first; `f` sees arrays either way.
  template <class... Args>
    requires(detail::array_argument<Args> && ...)
  auto operator()(const Args&... args) const {
    using R = std::decay_t<std::invoke_result_t<const F&, detail::as_array<Args>...>>;
    std::vector<array> inputs{detail::device_argument(args)...};
    auto outputs = cache_->call(inputs, [this](const std::vector<array>& tracers) {
      return call_with(tracers, std::index_sequence_for<Args...>{});
    });
    return detail::unflatten_result<R>(std::move(outputs));
  }

  /// Number of distinct signatures traced so far.
  std::size_t cache_size() const { return cache_->size(); }

  /// The per-shard programs of the plan for these arguments (traces on a miss), for inspection.
  template <class... Args>
  std::string lowered_text(const Args&... args) const {
    std::vector<array> inputs{detail::device_argument(args)...};
    return cache_->lowered_text(inputs, [this](const std::vector<array>& tracers) {
      return call_with(tracers, std::index_sequence_for<Args...>{});
    });
  }

private:
  template <std::size_t... I>
  std::vector<array> call_with(const std::vector<array>& tracers, std::index_sequence<I...>) const {
    return detail::flatten_result(f_(tracers[I]...));
  }

  F f_;
  std::shared_ptr<detail::plan_cache> cache_;
};

/// jit(f): see `jitted`.
template <class F>
jitted<F> jit(F f, std::string name = "jit") {
  return jitted<F>(std::move(f), std::move(name));
}

} // namespace am

#endif // ACTORMESH_SHARDING_JIT_HPP
