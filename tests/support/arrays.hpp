// Helpers for array tests: a runtime with 8 CPU devices, meshes and shardings, host references.
#pragma once

#include <actormesh.hpp>

#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/jit.hpp"
#include "actormesh/sharding/mesh.hpp"
#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/ops.hpp"
#include "actormesh/sharding/reductions.hpp"
#include "actormesh/sharding/random.hpp"
#include "actormesh/sharding/shape_ops.hpp"
#include "actormesh/sharding/single_device_sharding.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace am::testing {

/// A host array of `type` holding `values` (converted as astype converts).
template <class T>
host_array array_of(std::vector<T> values, host_array::shape_type shape, dtype type) {
  return host_array::from_vector<T>(values, std::move(shape)).astype(type);
}

/// A runtime with `count` CPU devices and no GPUs.
inline options cpus_only(int count) {
  options o;
  o.cpu_devices = count;
  o.use_gpus = false;
  return o;
}

/// A runtime with 8 CPU devices and no GPUs.
inline options eight_cpus() {
  return cpus_only(8);
}

/// The (4, 2) mesh with axes x, y over the 8 CPU devices.
inline mesh mesh_4x2() {
  return mesh(create_device_mesh({4, 2}, am::devices(platform::cpu)), {"x", "y"});
}

/// A NamedSharding on the (4, 2) mesh.
inline sharding_ptr on_4x2(const partition_spec& spec) {
  return make_named_sharding(mesh_4x2(), spec);
}

/// [1, 1] of dtype `t` on the first device (for result-dtype checks).
inline array ones_of(am::dtype t) {
  return device_put(host_array::from_vector(std::vector<double>{1.0, 1.0}, {2}).astype(t),
                    make_single_device_sharding(am::devices()[0]));
}

/// The Python-style scalar of a table's KIND: `bool` (True), `int` (3) or `float` (0.5).
inline scalar python_scalar(const std::string& kind) {
  if (kind == "bool")
    return scalar(true);
  if (kind == "int")
    return scalar(3);
  return scalar(0.5);
}

/// Host values of an array, as doubles.
inline std::vector<double> values(const array& a) {
  return a.to_host().astype(dtype::float64).to_vector<double>();
}

/// Host values of a host array, as doubles.
inline std::vector<double> values(const host_array& a) {
  return a.astype(dtype::float64).to_vector<double>();
}

/// True when both have the same length and every pair is within tolerance (NaNs match NaNs).
inline bool all_close(const std::vector<double>& a, const std::vector<double>& b, double rtol = 1e-5,
                      double atol = 1e-6) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i]))
      continue;
    if (!(std::abs(a[i] - b[i]) <= atol + rtol * std::abs(b[i])))
      return false;
  }
  return true;
}

} // namespace am::testing
