/// What a colocated function may be told in advance (JAX's `specialize`): the input specs it
/// accepts, a function computing its output specs on the caller's side (so that every call is
/// asynchronous), and the devices it runs on (so that a function without inputs can run).
#ifndef ACTORMESH_COLOCATED_SPECIALIZATION_HPP
#define ACTORMESH_COLOCATED_SPECIALIZATION_HPP

#include "actormesh/actors/device_info.hpp"
#include "actormesh/colocated/specs.hpp"

#include <functional>
#include <optional>
#include <vector>

namespace am {

/// Computes a call's output specs from its input specs (the tuple of the arguments' specs), on the
/// caller's side; the body is not run for it.
using out_specs_function = std::function<spec_tree(const spec_tree& inputs)>;

/// The fields a colocated function can be specialized on; each may be given once
/// ("in_specs already specified", "out_specs_fn already specified", "devices already specified").
///
///     auto g = f.specialize({.out_specs_fn = [](const am::spec_tree& in) { return in[0]; }});
///     auto h = f.specialize({.devices = am::colocated_cpu_devices(am::devices())});
struct specialization {
  /// The only input specs accepted (a tuple of the arguments' specs).
  std::optional<spec_tree> in_specs{};
  /// Computes the output specs: with it, every call is asynchronous.
  out_specs_function out_specs_fn{};
  /// The CPU devices to run on: required when the function takes no arrays.
  std::optional<std::vector<device>> devices{};
};

namespace detail {
/// `base` with the fields of `more` added; throws am::value_error (JAX's wording) for a field given
/// in both.
specialization merge(const specialization& base, const specialization& more);
} // namespace detail

} // namespace am

#endif // ACTORMESH_COLOCATED_SPECIALIZATION_HPP
