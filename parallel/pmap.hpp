/// pmap (jax.pmap): one function run on every device over its slice of the mapped arguments, with
/// collectives (parallel/collectives.hpp) between the devices. The function is traced once per
/// input signature on one device's slice; the plan has one program per device, and each
/// collective is a stage between programs (no device waits inside a program for another): the
/// reductions (psum, pmean, pmax, pmin) run between the programs on one buffer shared by the
/// process's devices, all-reduced across processes by the collectives engine. jit inside is implied; grad and vmap compose inside the pmapped function.
///
///     auto step = am::pmap(parallel_update_step, "devices", {am::none, am::none, 0, 0}, {am::none});
///     auto sharded_x = am::device_put(x_data, devices);   // [2, 4] over 2 devices
#ifndef ACTORMESH_PARALLEL_PMAP_HPP
#define ACTORMESH_PARALLEL_PMAP_HPP

#include "actormesh/parallel/axis_spec.hpp"
#include "actormesh/parallel/detail/pmap_impl.hpp"
#include "actormesh/sharding/host_array.hpp"
#include "actormesh/sharding/jit.hpp"

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace am {

/// A pmapped function: call it like the original, on arguments with a leading device axis.
template <class F>
class pmapped {
public:
  /// See `pmap`.
  pmapped(F f, std::string axis_name, axis_specs in_axes, axis_specs out_axes, std::vector<device> devices)
    : f_(std::move(f)), state_(std::make_shared<detail::pmap_state>()) {
    state_->axis_name = std::move(axis_name);
    state_->in_axes = std::move(in_axes);
    state_->out_axes = std::move(out_axes);
    state_->devices = std::move(devices);
  }

  /// Runs the function on every device; the result arrays are laid out one slice per device
  /// (out_axes 0) or replicated (out_axes none). Each argument is an am::array, an am::host_array
  /// or a scalar (int32, float32 or bool, as JAX takes Python's): host data is put by pmap, split
  /// over the devices when mapped and copied to each when not; `f` sees arrays either way.
  template <class... Args>
    requires(detail::array_argument<Args> && ...)
  auto operator()(const Args&... args) const {
    using R = std::decay_t<std::invoke_result_t<const F&, detail::as_array<Args>...>>;
    std::vector<detail::pmap_argument> inputs{detail::pmap_argument_of(args)...};
    detail::array_function fn = [this](const std::vector<array>& a) {
      return call_with(a, std::index_sequence_for<Args...>{});
    };
    return detail::unflatten_result<R>(detail::pmap_call(*state_, fn, inputs));
  }

  /// The per-device programs of the plan for these arguments, stage by stage (traces on a miss).
  template <class... Args>
  std::string lowered_text(const Args&... args) const {
    std::vector<detail::pmap_argument> inputs{detail::pmap_argument_of(args)...};
    detail::array_function fn = [this](const std::vector<array>& a) {
      return call_with(a, std::index_sequence_for<Args...>{});
    };
    return detail::pmap_lowered_text(*state_, fn, inputs);
  }

  /// Number of distinct signatures traced so far (with collective stages or as one plan).
  std::size_t cache_size() const { return detail::pmap_cache_size(*state_); }

private:
  template <std::size_t... I>
  std::vector<array> call_with(const std::vector<array>& a, std::index_sequence<I...>) const {
    return detail::flatten_result(f_(a[I]...));
  }

  F f_;
  std::shared_ptr<detail::pmap_state> state_;
};

/// pmap(f, axis_name, in_axes, out_axes, devices): `f` runs once per device (the first N devices
/// of the cluster for a mapped size N, which in one process are local devices, or exactly
/// `devices`, which may belong to several processes: under `actormesh launch` every process makes
/// the same call and runs its own devices' programs, and the collectives cross the processes) on the slices of the mapped arguments
/// (in_axes: a dim, or am::none to give every device the whole argument), and its outputs are
/// stacked along out_axes (am::none: the same value on every device, returned once). Collectives
/// inside `f` name `axis_name`.
template <class F>
pmapped<F> pmap(F f, std::string axis_name = "", axis_specs in_axes = {0}, axis_specs out_axes = {0},
                std::vector<device> devices = {}) {
  return pmapped<F>(std::move(f), std::move(axis_name), std::move(in_axes), std::move(out_axes), std::move(devices));
}

/// Places host data on a list of devices the way pmap lays out its inputs: slice i of dim 0 on
/// devices[i] (the leading extent must equal the number of devices).
array device_put(const host_array& data, const std::vector<device>& devices);

} // namespace am

#endif // ACTORMESH_PARALLEL_PMAP_HPP
