/// JAX's debugging tools for values inside jit (jax.debug.callback, jax.debug.print,
/// jax.debug.inspect_array_sharding, jax.effects_barrier).
///
///     auto f = am::jit([](const am::array& x) {
///       auto y = am::sin(x);
///       am::debug_print("y = {}", y);   // each device prints its shard of y, every call
///       return y * 2;
///     });
///     f(x);
///     am::effects_barrier();            // the prints of this thread's calls so far are done
///
/// A callback runs once per device holding the values (each replica too), with that device's
/// shard of each value copied to the host, on the host that owns the device (in a cluster, each
/// process its own devices), in this thread's lane: after the work issued before it, and for one
/// device in the order of the calls. It never holds up the devices. Outside jit it runs the same
/// way, on the arrays given.
#ifndef ACTORMESH_SHARDING_DEBUGGING_HPP
#define ACTORMESH_SHARDING_DEBUGGING_HPP

#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/host_array.hpp"

#include <concepts>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace am {

namespace detail {

/// A debug effect's body: the values' shards on one device, in the order of the values.
using debug_effect_function = std::function<void(const std::vector<host_array>& shards)>;

/// Records the effect in the jit trace being recorded (each call of the jitted function then runs
/// it; inside vmap and pmap once per example, parallel/detail/batched_effects.hpp), or runs it now
/// on `values`' shards outside jit. Throws am::value_error when the values are not on the same
/// devices.
void debug_effect(debug_effect_function body, std::vector<array> values);

/// A host array as a callback receives it, whatever the argument's type.
template <class A>
using debug_host_value = const host_array&;

} // namespace detail

/// jax.debug.callback: calls `f(shard...)` with the host copy of each value's shard, once per
/// device that holds the values (see the header comment for where and when). `f` must not throw:
/// an exception from it is reported on stderr and dropped, as it runs apart from the caller.
template <class F, class... A>
  requires(sizeof...(A) > 0 && (std::same_as<A, array> && ...)
           && std::is_invocable_v<F&, detail::debug_host_value<A>...>)
void debug_callback(F f, const A&... values) {
  detail::debug_effect(
    [f = std::move(f)](const std::vector<host_array>& shards) mutable {
      [&]<std::size_t... I>(std::index_sequence<I...>) { f(shards[I]...); }(std::index_sequence_for<A...>{});
    },
    std::vector<array>{values...});
}

/// jax.debug.print: `format` with one `{}` per value (fmt's syntax, as Python's str.format), each
/// replaced by the shard's values as numpy prints them, written to standard output as one line per
/// device. A format that does not fit the values throws am::value_error at the call.
void debug_print(const std::string& format, const std::vector<array>& values);

/// debug_print of the values given one by one: `am::debug_print("x = {}, y = {}", x, y)`.
template <class... A>
  requires(std::same_as<A, array> && ...)
void debug_print(const std::string& format, const A&... values) {
  debug_print(format, std::vector<array>{values...});
}

/// jax.effects_barrier: waits until every debug callback and print this thread issued has run.
void effects_barrier();

/// jax.debug.inspect_array_sharding: calls `callback` with the sharding of `x`: at once outside
/// jit; inside jit while the function is traced, so once per input signature (a cached call
/// does not call it again), as JAX does.
void inspect_array_sharding(const array& x, const std::function<void(const sharding_ptr&)>& callback);

} // namespace am

#endif // ACTORMESH_SHARDING_DEBUGGING_HPP
