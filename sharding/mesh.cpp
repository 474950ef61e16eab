#include "actormesh/sharding/mesh.hpp"

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/errors.hpp"
#include "sharding/detail/py_format.hpp"

#include <algorithm>
#include <limits>
#include <set>

namespace am {

namespace {

// numpy prints shapes in reshape errors without blanks: (3,2).
std::string numpy_shape(const std::vector<std::int64_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0)
      out += ',';
    out += std::to_string(shape[i]);
  }
  return out + ")";
}

} // namespace

device_grid::device_grid(std::vector<std::int64_t> shape, std::vector<device> devices)
    : shape_(std::move(shape)), devices_(std::move(devices)) {
  if (element_count(shape_) != static_cast<std::int64_t>(devices_.size()))
    throw value_error("cannot reshape array of size " + std::to_string(devices_.size()) + " into shape " +
                      numpy_shape(shape_));
}

device_grid::device_grid(std::vector<device> devices)
    : shape_{static_cast<std::int64_t>(devices.size())}, devices_(std::move(devices)) {}

const device& device_grid::at(const std::vector<std::int64_t>& coords) const {
  if (coords.size() != shape_.size())
    throw value_error("device_grid::at needs " + std::to_string(shape_.size()) + " coordinates, got " +
                      std::to_string(coords.size()));
  std::int64_t flat = 0;
  for (std::size_t i = 0; i < coords.size(); ++i) {
    if (coords[i] < 0 || coords[i] >= shape_[i])
      throw value_error("index " + std::to_string(coords[i]) + " is out of bounds for axis " +
                        std::to_string(i) + " with size " + std::to_string(shape_[i]));
    flat = flat * shape_[i] + coords[i];
  }
  return devices_[static_cast<std::size_t>(flat)];
}

device_grid device_grid::reshape(std::vector<std::int64_t> shape) const {
  const auto unknown = std::count(shape.begin(), shape.end(), std::int64_t{-1});
  if (unknown > 1)
    throw value_error("can only specify one unknown dimension");
  if (unknown == 1) {
    std::optional<std::int64_t> known = 1;
    for (auto d : shape)
      if (d != -1 && known)
        known = checked_mul(*known, d);
    const auto n = static_cast<std::int64_t>(devices_.size());
    if (!known || *known <= 0 || n % *known != 0)
      throw value_error("cannot reshape array of size " + std::to_string(n) + " into shape " +
                        numpy_shape(shape));
    std::replace(shape.begin(), shape.end(), std::int64_t{-1}, n / *known);
  }
  return device_grid(std::move(shape), devices_);
}

device_grid create_device_mesh(const std::vector<std::int64_t>& shape, const std::vector<device>& devices) {
  // JAX compares with Python's exact product, so a product past int64 is a mismatch, never a wrap.
  if (try_element_count(shape) != static_cast<std::int64_t>(devices.size()))
    throw value_error("Number of devices " + std::to_string(devices.size()) +
                      " must equal the product of mesh_shape " + detail::py_int_tuple(shape));
  return device_grid(shape, devices);
}

mesh::mesh(device_grid devices, std::vector<std::string> axis_names)
    : grid_(std::move(devices)), names_(std::move(axis_names)) {
  if (grid_.ndim() != names_.size())
    throw value_error(
        "Mesh requires the ndim of its first argument (`devices`) to equal the length of its second "
        "argument (`axis_names`), but got devices.ndim == " +
        std::to_string(grid_.ndim()) + " and len(axis_names) == " + std::to_string(names_.size()) + ".");
  for (const auto& n : names_)
    if (n.empty())
      throw value_error("Mesh axis names must be non-empty strings, but got " + axis_names_repr() + ".");
  std::set<std::string> seen;
  for (const auto& n : names_)
    if (!seen.insert(n).second)
      throw value_error("Mesh axis names must be unique, but got " + axis_names_repr() + " where " +
                        detail::py_repr(n) + " appears more than once.");
  // A device twice would hold two blocks in one shard slot: device_put to [d0, d0] kept one block
  // and lost the other. (JAX's Mesh takes it and its device_put then fails.)
  const auto& placed = grid_.devices();
  for (std::size_t i = 0; i < placed.size(); ++i)
    for (std::size_t j = i + 1; j < placed.size(); ++j)
      if (placed[i].id == placed[j].id)
        throw value_error("Mesh devices must be unique, but got " + am::to_string(placed[i]) + " at positions "
                          + std::to_string(i) + " and " + std::to_string(j) + ".");
}

mesh::mesh(const std::vector<std::int64_t>& shape, const std::vector<device>& devices,
           std::vector<std::string> axis_names)
    : mesh(create_device_mesh(shape, devices), std::move(axis_names)) {}

std::optional<std::size_t> mesh::axis_index(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name)
      return i;
  return std::nullopt;
}

std::int64_t mesh::axis_size(std::string_view name) const {
  if (auto i = axis_index(name))
    return grid_.shape()[*i];
  throw value_error("Resource axis: " + std::string(name) + " is not found in mesh: " + axis_names_repr() +
                    ".");
}

bool mesh::is_fully_addressable(int process_index) const noexcept {
  return std::all_of(grid_.devices().begin(), grid_.devices().end(),
                     [&](const device& d) { return d.process_index == process_index; });
}

std::string mesh::to_string() const {
  std::string out = "Mesh(";
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += detail::py_repr(names_[i]) + ": " + std::to_string(grid_.shape()[i]);
  }
  return out + ")";
}

std::string mesh::axis_names_repr() const {
  std::vector<std::string> items;
  for (const auto& n : names_)
    items.push_back(detail::py_repr(n));
  return detail::py_tuple(items);
}

std::vector<device> virtual_cpu_devices(int n) {
  std::vector<device> out;
  out.reserve(static_cast<std::size_t>(std::max(n, 0)));
  for (int i = 0; i < n; ++i)
    out.push_back(device{i, 0, platform::cpu, i});
  return out;
}

std::vector<std::int64_t> parse_mesh_shape(std::string_view text) {
  constexpr std::string_view usage = "write positive axis sizes separated by 'x', like 4x2";
  auto shape = detail::parse_extents(text, 'x', "mesh shape", usage);
  const auto invalid = [&](const std::string& reason) {
    return detail::invalid_text("mesh shape", text, reason, usage);
  };
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 0)
      throw invalid("axis " + std::to_string(i) + " has size 0");
  if (!try_element_count(shape))
    throw invalid("the mesh would have more than " + std::to_string(std::numeric_limits<std::int64_t>::max()) +
                  " devices");
  return shape;
}

} // namespace am
