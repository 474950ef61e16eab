/// Mesh: an N-d grid of devices with one name per grid axis (`jax.sharding.Mesh`), and the device
/// grids it is built from (`mesh_utils.create_device_mesh`).
#ifndef ACTORMESH_SHARDING_MESH_HPP
#define ACTORMESH_SHARDING_MESH_HPP

#include "actormesh/actors/device_info.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace am {

/// An N-d array of devices in row-major order: what numpy's `ndarray` of devices is in JAX.
/// Plain value type; rank 0 is allowed (one device, shape `()`).
class device_grid {
public:
  /// An empty 1-d grid.
  device_grid() : shape_{0} {}

  /// `devices` laid out row-major in `shape`; throws am::value_error when the sizes differ
  /// ("cannot reshape array of size 8 into shape (3, 2)", numpy's wording).
  device_grid(std::vector<std::int64_t> shape, std::vector<device> devices);

  /// A 1-d grid of `devices`.
  explicit device_grid(std::vector<device> devices);

  /// The grid shape.
  const std::vector<std::int64_t>& shape() const noexcept { return shape_; }

  /// Number of grid axes.
  std::size_t ndim() const noexcept { return shape_.size(); }

  /// Number of devices.
  std::size_t size() const noexcept { return devices_.size(); }

  /// The devices, row-major.
  const std::vector<device>& devices() const noexcept { return devices_; }

  /// The device at grid coordinates `coords` (one per axis, each in range).
  const device& at(const std::vector<std::int64_t>& coords) const;

  /// The same devices in another shape (one entry may be -1, inferred); numpy's reshape errors.
  device_grid reshape(std::vector<std::int64_t> shape) const;

  /// Same shape and same devices in the same order.
  friend bool operator==(const device_grid&, const device_grid&) = default;

private:
  std::vector<std::int64_t> shape_;
  std::vector<device> devices_;
};

/// `mesh_utils.create_device_mesh(shape, devices)`: the devices arranged for the hardware topology.
/// On CPU (and for our GPUs, which have no torus) that is plain order. Throws am::value_error when
/// the device count is not the product of `shape` ("Number of devices 6 must equal the product of
/// mesh_shape (4, 2)").
device_grid create_device_mesh(const std::vector<std::int64_t>& shape, const std::vector<device>& devices);

/// A named device mesh. Axis names are unique and non-empty and there is one per grid axis.
/// Immutable value type; copies are cheap enough for the sizes meshes have.
class mesh {
public:
  /// `Mesh(devices, axis_names)`. Throws am::value_error when the grid rank differs from the number
  /// of names (JAX's wording), when a name is empty, or when a name repeats.
  mesh(device_grid devices, std::vector<std::string> axis_names);

  /// Convenience: `create_device_mesh(shape, devices)` then named.
  mesh(const std::vector<std::int64_t>& shape, const std::vector<device>& devices,
       std::vector<std::string> axis_names);

  /// The device grid.
  const device_grid& devices() const noexcept { return grid_; }

  /// The devices in mesh-flat (row-major) order: JAX's `mesh.devices.flat`.
  const std::vector<device>& flat_devices() const noexcept { return grid_.devices(); }

  /// Axis names in grid order.
  const std::vector<std::string>& axis_names() const noexcept { return names_; }

  /// Axis sizes in grid order (`mesh.devices.shape`).
  const std::vector<std::int64_t>& axis_sizes() const noexcept { return grid_.shape(); }

  /// Number of axes.
  std::size_t ndim() const noexcept { return names_.size(); }

  /// Number of devices.
  std::size_t size() const noexcept { return grid_.size(); }

  /// Position of the axis called `name`, if there is one.
  std::optional<std::size_t> axis_index(std::string_view name) const noexcept;

  /// Size of the axis called `name` (`mesh.shape[name]`); throws am::value_error if unknown.
  std::int64_t axis_size(std::string_view name) const;

  /// True when every device belongs to process `process_index`.
  bool is_fully_addressable(int process_index) const noexcept;

  /// JAX's `str(mesh)`: `Mesh('x': 4, 'y': 2)`.
  std::string to_string() const;

  /// The axis names as a Python tuple: `('x', 'y')`.
  std::string axis_names_repr() const;

  /// Same names, shape and devices in the same order.
  friend bool operator==(const mesh&, const mesh&) = default;

private:
  device_grid grid_;
  std::vector<std::string> names_;
};

/// `n` virtual CPU devices with ids 0..n-1 in process 0: the devices the CLI pictures use.
std::vector<device> virtual_cpu_devices(int n);

/// Parses a mesh shape written `4x2` (or `8`, or `2x2x2`) into axis sizes; throws am::value_error
/// ("Invalid mesh shape '4x0': ...") unless every part is a positive integer that fits in int64 and
/// the device count (their product) fits in int64 too.
std::vector<std::int64_t> parse_mesh_shape(std::string_view text);

} // namespace am

#endif // ACTORMESH_SHARDING_MESH_HPP
