// Small values the colocated tests pass to their functions and objects: scalars on chosen CPU
// devices, read back as ints, and the output-spec function that says "the same as the first input".
#pragma once

#include <actormesh.hpp>

#include <cstddef>

namespace am::testing {

/// A scalar replicated on the first `n` devices (the seed's `jax.device_put(1, cpu_sharding)`).
inline array scalar_on_first(int value, int n = 1) {
  auto devs = devices();
  devs.resize(static_cast<std::size_t>(n));
  mesh m({n}, devs, {"x"});
  return device_put(host_array::scalar(value), make_named_sharding(m, P()));
}

/// A scalar on device `device` (its index in am::devices()) alone.
inline array scalar_on_device(int value, int device = 0) {
  mesh m({1}, {devices()[static_cast<std::size_t>(device)]}, {"x"});
  return device_put(host_array::scalar(value), make_named_sharding(m, P()));
}

/// The int a 0-d array holds.
inline int value_of(const array& a) { return a.to_host().item<int>(); }

/// Output specs equal to the first input's (`out_specs_fn = lambda x: x`).
inline spec_tree same_as_first(const spec_tree& in) { return in[0]; }

} // namespace am::testing
