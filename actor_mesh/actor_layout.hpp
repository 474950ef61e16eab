/// Where the actors of a mesh live: named axes, and for each point of them the process that owns it
/// and the devices it may use. A layout is plain data; spawning over it makes the actors
/// (actor_class::spawn), and slicing it by axis names makes the layout of a slice.
#ifndef ACTORMESH_ACTOR_MESH_ACTOR_LAYOUT_HPP
#define ACTORMESH_ACTOR_MESH_ACTOR_LAYOUT_HPP

#include "actormesh/actors/device_info.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace am {

class mesh;

/// One point of a layout: its place in the spawned mesh and what it owns.
struct actor_point {
  int rank = 0;                       ///< its index, row-major, in the mesh it was spawned in
  std::vector<std::int64_t> coords;   ///< its coordinates along the spawned mesh's axes
  int process = 0;                    ///< the process whose host constructs and runs it
  std::vector<device> devices;        ///< the devices it may use (may be empty)
};

/// Named axes over points. Axis names are unique; the points are in row-major order of the axes.
class actor_layout {
public:
  /// One point per process of the cluster, axis "process".
  static actor_layout per_process();

  /// One point per device of `devices`, with its axes ("host", "device" style names are the
  /// caller's to choose); each point lives in its device's process.
  static actor_layout per_device(const am::mesh& devices);

  /// One point per device of the cluster, axes {"host": processes, "device": devices of each}; the
  /// processes must have the same number of devices.
  static actor_layout per_device();

  /// A shape such as {{"host", 4}, {"gpu", 2}} laid over the cluster's processes: the points, in
  /// row-major order, go to the processes in equal blocks (the size must be a multiple of the
  /// process count). When a block has as many points as its process has devices, each point gets
  /// one of them; otherwise each point gets all of its process's devices.
  static actor_layout over_processes(const std::vector<std::pair<std::string, std::int64_t>>& shape);

  /// A layout of the given axes and points (row-major; the product of the sizes is the number of
  /// points). Throws am::value_error when they disagree or a name repeats.
  actor_layout(std::vector<std::string> axis_names, std::vector<std::int64_t> axis_sizes,
               std::vector<actor_point> points);

  /// The points where `axis` is `index`, without that axis. Throws am::value_error for an unknown
  /// axis or an index out of range.
  actor_layout slice(const std::string& axis, std::int64_t index) const;

  /// The points where `axis` is in [begin, end), keeping the axis (of size end - begin).
  actor_layout slice(const std::string& axis, std::int64_t begin, std::int64_t end) const;

  const std::vector<std::string>& axis_names() const noexcept { return names_; }
  const std::vector<std::int64_t>& axis_sizes() const noexcept { return sizes_; }
  const std::vector<actor_point>& points() const noexcept { return points_; }
  std::size_t size() const noexcept { return points_.size(); }

  /// The point at `coords` (one per axis of this layout).
  const actor_point& at(const std::vector<std::int64_t>& coords) const;

  /// `{host: 2, device: 2}`, the axes as Monarch prints a mesh's shape.
  std::string shape_string() const;

private:
  actor_layout() = default;
  std::size_t axis_of(const std::string& axis) const;
  std::vector<std::string> names_;
  std::vector<std::int64_t> sizes_;
  std::vector<actor_point> points_;
};

/// The coordinates of row-major position `rank` in a grid of axis sizes `sizes`.
std::vector<std::int64_t> row_major_coords(std::int64_t rank, const std::vector<std::int64_t>& sizes);

/// `{host: 1, device: 0}`: a point's coordinates named by the axes of the mesh it was spawned in.
std::string point_string(const std::vector<std::string>& axis_names, const std::vector<std::int64_t>& coords);

} // namespace am

#endif // ACTORMESH_ACTOR_MESH_ACTOR_LAYOUT_HPP
