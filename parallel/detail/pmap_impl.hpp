/// pmap's work: the mapped arguments laid out one slice per device, the function traced once per
/// signature on one device's slice, replayed over the device axis (batching.hpp) inside a jit-like
/// plan: one program per device, with the collectives as stages between programs.
#ifndef ACTORMESH_PARALLEL_DETAIL_PMAP_IMPL_HPP
#define ACTORMESH_PARALLEL_DETAIL_PMAP_IMPL_HPP

#include "actormesh/actors/device_info.hpp"
#include "actormesh/parallel/axis_spec.hpp"
#include "actormesh/parallel/detail/staged_pmap.hpp"
#include "actormesh/parallel/detail/tracing.hpp"
#include "actormesh/sharding/detail/array_arguments.hpp"
#include "actormesh/sharding/host_array.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace am::detail {

/// The layouts of one device list: one slice per device along dim 0, and replicated.
struct pmap_layouts {
  sharding_ptr stacked;
  sharding_ptr replicated;
};

/// A pmapped function's settings and caches.
struct pmap_state {
  std::string axis_name;        ///< the name collectives use (may be empty)
  axis_specs in_axes;
  axis_specs out_axes;
  std::vector<device> devices;  ///< as given (empty: the first local devices)
  std::shared_ptr<plan_cache> cache = std::make_shared<plan_cache>("pmap");
  std::shared_ptr<staged_cache> staged = make_staged_cache(); ///< the same function with collective stages
  std::mutex mutex;
  std::map<std::vector<int>, pmap_layouts> layouts; ///< by device ids, so plans stay cached
};

/// One argument of a pmapped call as given: an array, or host data (a host array, or a scalar
/// made one) that pmap puts itself, as JAX does with numpy inputs: split one slice per device
/// when mapped, a copy on every device when not.
using pmap_argument = std::variant<array, host_array>;

/// `x` as pmap takes it (see pmap_argument).
inline pmap_argument pmap_argument_of(const array& x) { return x; }
inline pmap_argument pmap_argument_of(const host_array& x) { return x; }
template <class T>
  requires std::is_arithmetic_v<T>
pmap_argument pmap_argument_of(T value) {
  return scalar_argument(value);
}

/// Runs `f` under pmap on `args`.
std::vector<array> pmap_call(pmap_state& s, const array_function& f, const std::vector<pmap_argument>& args);

/// The per-device programs of the plan for these arguments (traces on a miss), for inspection.
std::string pmap_lowered_text(pmap_state& s, const array_function& f, const std::vector<pmap_argument>& args);

/// Signatures traced so far: the staged programs and the one-plan ones.
std::size_t pmap_cache_size(const pmap_state& s);

/// The layout of pmap's inputs and outputs over `devices`: dim 0 split one slice per device.
sharding_ptr stacked_layout(const std::vector<device>& devices, const std::string& axis_name);

} // namespace am::detail

#endif // ACTORMESH_PARALLEL_DETAIL_PMAP_IMPL_HPP
