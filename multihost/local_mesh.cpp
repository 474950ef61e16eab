#include "actormesh/multihost/local_mesh.hpp"

#include "actormesh/actors/errors.hpp"

#include <algorithm>
#include <limits>

namespace am {

namespace {

/// The mesh coordinates of the device at row-major position `flat`.
std::vector<std::int64_t> coords_of(std::size_t flat, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> c(shape.size());
  auto rest = static_cast<std::int64_t>(flat);
  for (std::size_t d = shape.size(); d-- > 0;) {
    c[d] = rest % shape[d];
    rest /= shape[d];
  }
  return c;
}

} // namespace

mesh local_mesh(const mesh& m, int process) {
  const auto& shape = m.axis_sizes();
  const auto& flat = m.flat_devices();
  std::vector<std::int64_t> lo(shape.size(), std::numeric_limits<std::int64_t>::max()), hi(shape.size(), -1);
  bool any = false;
  for (std::size_t i = 0; i < flat.size(); ++i) {
    if (flat[i].process_index != process)
      continue;
    any = true;
    auto c = coords_of(i, shape);
    for (std::size_t d = 0; d < c.size(); ++d) {
      lo[d] = std::min(lo[d], c[d]);
      hi[d] = std::max(hi[d], c[d]);
    }
  }
  if (!any)
    throw value_error("The mesh " + m.to_string() + " has no device of process " + std::to_string(process));
  std::vector<std::int64_t> sub(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d)
    sub[d] = hi[d] - lo[d] + 1;
  std::vector<device> devices;
  for (std::size_t i = 0; i < flat.size(); ++i) {
    auto c = coords_of(i, shape);
    bool inside = true;
    for (std::size_t d = 0; d < c.size(); ++d)
      inside = inside && c[d] >= lo[d] && c[d] <= hi[d];
    if (!inside)
      continue;
    if (flat[i].process_index != process)
      throw value_error("When passing host local inputs to pjit, devices connected to a single host must form a "
                        "contiguous subcube of the global device mesh");
    devices.push_back(flat[i]);
  }
  return mesh(device_grid(sub, devices), m.axis_names());
}

} // namespace am
