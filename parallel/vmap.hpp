/// vmap (jax.vmap): a function written for one example, run on a batch. The function is traced
/// once on one example's shapes and replayed with the batch axis as the leading dim of every value
/// it reaches (parallel/detail/batching.hpp), so a call is one staged plan, cached per input
/// signature like jit. Composes with jit, grad and pmap (vmap inside a pmapped function).
///
///     auto process_item = [](const am::array& item) { return am::tanh(item) * 2.0; };
///     auto batch = am::vmap(process_item)(items);            // items: [3, 4] -> [3, 4]
///     auto rows = am::vmap(f, {0, am::none}, {1})(xs, w);    // map xs along 0, broadcast w
#ifndef ACTORMESH_PARALLEL_VMAP_HPP
#define ACTORMESH_PARALLEL_VMAP_HPP

#include "actormesh/parallel/axis_spec.hpp"
#include "actormesh/parallel/detail/vmap_impl.hpp"
#include "actormesh/sharding/detail/array_arguments.hpp"
#include "actormesh/sharding/jit.hpp"

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace am {

/// A vectorized function: call it like the original, on batched arguments.
template <class F>
class vmapped {
public:
  /// `in_axes` / `out_axes`: one entry per argument / output, or one for all. Collectives over
  /// `axis_name` run across the batch.
  vmapped(F f, axis_specs in_axes, axis_specs out_axes, std::string axis_name)
    : f_(std::move(f)), in_axes_(std::move(in_axes)), out_axes_(std::move(out_axes)),
      axis_name_(std::move(axis_name)), cache_(std::make_shared<detail::plan_cache>("vmap")) {}

  /// Runs the function over the batch. Arguments are arrays, host arrays or scalars (see jitted).
  template <class... Args>
    requires(detail::array_argument<Args> && ...)
  auto operator()(const Args&... args) const {
    using R = std::decay_t<std::invoke_result_t<const F&, detail::as_array<Args>...>>;
    std::vector<array> inputs{detail::device_argument(args)...};
    auto out = cache_->call(inputs, [this](const std::vector<array>& tracers) {
      detail::array_function fn = [this](const std::vector<array>& a) {
        return call_with(a, std::index_sequence_for<Args...>{});
      };
      return detail::vmap_traced(fn, tracers, in_axes_, out_axes_, axis_name_);
    });
    return detail::unflatten_result<R>(std::move(out));
  }

private:
  template <std::size_t... I>
  std::vector<array> call_with(const std::vector<array>& a, std::index_sequence<I...>) const {
    return detail::flatten_result(f_(a[I]...));
  }

  F f_;
  axis_specs in_axes_;
  axis_specs out_axes_;
  std::string axis_name_;
  std::shared_ptr<detail::plan_cache> cache_;
};

/// vmap(f, in_axes, out_axes, axis_name): see `vmapped`. Defaults map every argument and output
/// along dim 0.
template <class F>
vmapped<F> vmap(F f, axis_specs in_axes = {0}, axis_specs out_axes = {0}, std::string axis_name = "") {
  return vmapped<F>(std::move(f), std::move(in_axes), std::move(out_axes), std::move(axis_name));
}

} // namespace am

#endif // ACTORMESH_PARALLEL_VMAP_HPP
