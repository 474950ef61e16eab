#include "actormesh/colocated/specialization.hpp"

#include "actormesh/actors/errors.hpp"

namespace am::detail {

specialization merge(const specialization& base, const specialization& more) {
  specialization out = base;
  if (more.in_specs) {
    if (base.in_specs)
      throw value_error("in_specs already specified");
    out.in_specs = more.in_specs;
  }
  if (more.out_specs_fn) {
    if (base.out_specs_fn)
      throw value_error("out_specs_fn already specified");
    out.out_specs_fn = more.out_specs_fn;
  }
  if (more.devices) {
    if (base.devices)
      throw value_error("devices already specified");
    out.devices = more.devices;
  }
  return out;
}

} // namespace am::detail
