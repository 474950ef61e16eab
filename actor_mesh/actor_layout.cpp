#include "actormesh/actor_mesh/actor_layout.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/runtime.hpp"
#include "actormesh/sharding/mesh.hpp"

#include <algorithm>
#include <set>

namespace am {

namespace {

/// The cluster's devices grouped by process (index = process).
std::vector<std::vector<device>> devices_by_process() {
  std::vector<std::vector<device>> out(static_cast<std::size_t>(process_count()));
  for (auto& d : devices())
    out.at(static_cast<std::size_t>(d.process_index)).push_back(d);
  return out;
}

/// Numbers the points of a freshly made layout: rank and coordinates in it.
std::vector<actor_point> numbered(std::vector<actor_point> points, const std::vector<std::int64_t>& sizes) {
  for (std::size_t r = 0; r < points.size(); ++r) {
    points[r].rank = static_cast<int>(r);
    points[r].coords = row_major_coords(static_cast<std::int64_t>(r), sizes);
  }
  return points;
}

} // namespace

actor_layout::actor_layout(std::vector<std::string> axis_names, std::vector<std::int64_t> axis_sizes,
                           std::vector<actor_point> points)
    : names_(std::move(axis_names)), sizes_(std::move(axis_sizes)), points_(std::move(points)) {
  if (names_.size() != sizes_.size())
    throw value_error("actor_layout: " + std::to_string(names_.size()) + " axis names for "
                      + std::to_string(sizes_.size()) + " axis sizes");
  std::set<std::string> seen;
  std::int64_t total = 1;
  for (std::size_t k = 0; k < names_.size(); ++k) {
    if (!seen.insert(names_[k]).second)
      throw value_error("actor_layout: the axis name '" + names_[k] + "' appears twice");
    if (sizes_[k] < 0 || (sizes_[k] > 0 && total > (std::int64_t{1} << 40) / sizes_[k]))
      throw value_error("actor_layout: axis '" + names_[k] + "' has the size " + std::to_string(sizes_[k]));
    total *= sizes_[k];
  }
  if (total != static_cast<std::int64_t>(points_.size()))
    throw value_error("actor_layout: the shape " + shape_string() + " has " + std::to_string(total)
                      + " points, but " + std::to_string(points_.size()) + " were given");
}

actor_layout actor_layout::per_process() {
  auto by_process = devices_by_process();
  std::vector<actor_point> points(by_process.size());
  for (std::size_t p = 0; p < points.size(); ++p) {
    points[p].process = static_cast<int>(p);
    points[p].devices = by_process[p];
  }
  std::vector<std::int64_t> sizes{static_cast<std::int64_t>(points.size())};
  return actor_layout({"process"}, sizes, numbered(std::move(points), sizes));
}

actor_layout actor_layout::per_device(const am::mesh& devices) {
  std::vector<actor_point> points;
  for (auto& d : devices.flat_devices())
    points.push_back(actor_point{0, {}, d.process_index, {d}});
  return actor_layout(devices.axis_names(), devices.axis_sizes(), numbered(std::move(points), devices.axis_sizes()));
}

actor_layout actor_layout::per_device() {
  auto by_process = devices_by_process();
  std::vector<actor_point> points;
  for (auto& own : by_process) {
    if (own.size() != by_process.front().size())
      throw value_error("actor_layout::per_device: the processes have different numbers of devices ("
                        + std::to_string(by_process.front().size()) + " and " + std::to_string(own.size())
                        + "); pass a mesh of the devices to use");
    for (auto& d : own)
      points.push_back(actor_point{0, {}, d.process_index, {d}});
  }
  std::vector<std::int64_t> sizes{static_cast<std::int64_t>(by_process.size()),
                                  static_cast<std::int64_t>(by_process.front().size())};
  return actor_layout({"host", "device"}, sizes, numbered(std::move(points), sizes));
}

actor_layout actor_layout::over_processes(const std::vector<std::pair<std::string, std::int64_t>>& shape) {
  std::vector<std::string> names;
  std::vector<std::int64_t> sizes;
  std::int64_t total = 1;
  for (auto& [name, size] : shape) {
    if (size <= 0 || total > (std::int64_t{1} << 40) / size)
      throw value_error("actor_layout::over_processes: axis '" + name + "' has the size " + std::to_string(size));
    names.push_back(name);
    sizes.push_back(size);
    total *= size;
  }
  auto by_process = devices_by_process();
  auto processes = static_cast<std::int64_t>(by_process.size());
  if (total % processes != 0)
    throw value_error("actor_layout::over_processes: " + std::to_string(total) + " points do not divide over "
                      + std::to_string(processes) + " processes");
  auto block = total / processes;
  std::vector<actor_point> points(static_cast<std::size_t>(total));
  for (std::int64_t r = 0; r < total; ++r) {
    auto& point = points[static_cast<std::size_t>(r)];
    point.process = static_cast<int>(r / block);
    auto& own = by_process[static_cast<std::size_t>(point.process)];
    if (static_cast<std::int64_t>(own.size()) == block)
      point.devices = {own[static_cast<std::size_t>(r % block)]};
    else
      point.devices = own;
  }
  return actor_layout(names, sizes, numbered(std::move(points), sizes));
}

std::size_t actor_layout::axis_of(const std::string& axis) const {
  auto it = std::find(names_.begin(), names_.end(), axis);
  if (it == names_.end())
    throw value_error("actor mesh of shape " + shape_string() + " has no axis '" + axis + "'");
  return static_cast<std::size_t>(it - names_.begin());
}

actor_layout actor_layout::slice(const std::string& axis, std::int64_t index) const {
  auto k = axis_of(axis);
  if (index < 0 || index >= sizes_[k])
    throw value_error("index " + std::to_string(index) + " is out of bounds for axis '" + axis + "' with size "
                      + std::to_string(sizes_[k]));
  auto kept = slice(axis, index, index + 1);
  kept.names_.erase(kept.names_.begin() + static_cast<std::ptrdiff_t>(k));
  kept.sizes_.erase(kept.sizes_.begin() + static_cast<std::ptrdiff_t>(k));
  return kept;
}

actor_layout actor_layout::slice(const std::string& axis, std::int64_t begin, std::int64_t end) const {
  auto k = axis_of(axis);
  if (begin < 0 || end > sizes_[k] || begin >= end)
    throw value_error("slice [" + std::to_string(begin) + ", " + std::to_string(end) + ") of axis '" + axis
                      + "' with size " + std::to_string(sizes_[k]) + " is empty or out of bounds");
  std::vector<actor_point> kept;
  for (std::size_t r = 0; r < points_.size(); ++r) {
    auto c = row_major_coords(static_cast<std::int64_t>(r), sizes_)[k];
    if (c >= begin && c < end)
      kept.push_back(points_[r]);
  }
  auto sizes = sizes_;
  sizes[k] = end - begin;
  actor_layout out;
  out.names_ = names_;
  out.sizes_ = std::move(sizes);
  out.points_ = std::move(kept);
  return out;
}

const actor_point& actor_layout::at(const std::vector<std::int64_t>& coords) const {
  if (coords.size() != sizes_.size())
    throw value_error("actor mesh of shape " + shape_string() + " takes " + std::to_string(sizes_.size())
                      + " coordinates, got " + std::to_string(coords.size()));
  std::int64_t rank = 0;
  for (std::size_t k = 0; k < coords.size(); ++k) {
    if (coords[k] < 0 || coords[k] >= sizes_[k])
      throw value_error("index " + std::to_string(coords[k]) + " is out of bounds for axis '" + names_[k]
                        + "' with size " + std::to_string(sizes_[k]));
    rank = rank * sizes_[k] + coords[k];
  }
  return points_[static_cast<std::size_t>(rank)];
}

std::string actor_layout::shape_string() const {
  std::string out = "{";
  for (std::size_t k = 0; k < names_.size(); ++k)
    out += (k ? ", " : "") + names_[k] + ": " + std::to_string(sizes_[k]);
  return out + "}";
}

std::vector<std::int64_t> row_major_coords(std::int64_t rank, const std::vector<std::int64_t>& sizes) {
  std::vector<std::int64_t> coords(sizes.size());
  for (std::size_t k = sizes.size(); k-- > 0;) {
    coords[k] = rank % sizes[k];
    rank /= sizes[k];
  }
  return coords;
}

std::string point_string(const std::vector<std::string>& axis_names, const std::vector<std::int64_t>& coords) {
  std::string out = "{";
  for (std::size_t k = 0; k < axis_names.size() && k < coords.size(); ++k)
    out += (k ? ", " : "") + axis_names[k] + ": " + std::to_string(coords[k]);
  return out + "}";
}

} // namespace am
