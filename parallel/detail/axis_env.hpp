/// The named axes bound while pmap or vmap traces a function (JAX's axis environment): collectives
/// look their axis up here. Per thread, innermost binding first.
#pragma once

#include "actormesh/sharding/sharding.hpp"

#include <cstdint>
#include <string>

namespace am::detail {

/// One bound axis: its name, its size, and the sharding of one per-device (per-example) value.
struct bound_axis {
  std::string name;
  std::int64_t size = 0;
  sharding_ptr layout;
};

/// Binds an axis for the lifetime of the object.
class axis_scope {
public:
  /// Binds `axis` on this thread (an empty name binds nothing).
  explicit axis_scope(bound_axis axis);
  ~axis_scope();
  axis_scope(const axis_scope&) = delete;
  axis_scope& operator=(const axis_scope&) = delete;

private:
  bool bound_;
};

/// The innermost binding of `name`; throws am::value_error "unbound axis name: x" (JAX raises NameError).
const bound_axis& lookup_axis(const std::string& name);

} // namespace am::detail
