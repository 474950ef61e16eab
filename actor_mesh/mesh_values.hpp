/// The answers of a call to every actor of a mesh, shaped like the mesh.
#ifndef ACTORMESH_ACTOR_MESH_MESH_VALUES_HPP
#define ACTORMESH_ACTOR_MESH_MESH_VALUES_HPP

#include "actormesh/actors/errors.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace am {

/// One value per point of a mesh, row-major along its axes (`call`'s answer).
template <class R>
class mesh_values {
public:
  mesh_values() = default;
  mesh_values(std::vector<std::string> axis_names, std::vector<std::int64_t> axis_sizes, std::vector<R> values)
      : names_(std::move(axis_names)), sizes_(std::move(axis_sizes)), values_(std::move(values)) {}

  const std::vector<std::string>& axis_names() const noexcept { return names_; }
  const std::vector<std::int64_t>& axis_sizes() const noexcept { return sizes_; }
  std::size_t size() const noexcept { return values_.size(); }

  /// The value of the point at row-major position `k`.
  const R& operator[](std::size_t k) const { return values_.at(k); }

  /// The value at `coords`, one per axis; am::value_error when out of range.
  const R& at(const std::vector<std::int64_t>& coords) const {
    if (coords.size() != sizes_.size())
      throw value_error("mesh_values: " + std::to_string(coords.size()) + " coordinates for "
                        + std::to_string(sizes_.size()) + " axes");
    std::size_t k = 0;
    for (std::size_t a = 0; a < coords.size(); ++a) {
      if (coords[a] < 0 || coords[a] >= sizes_[a])
        throw value_error("index " + std::to_string(coords[a]) + " is out of bounds for axis '" + names_[a]
                          + "' with size " + std::to_string(sizes_[a]));
      k = k * static_cast<std::size_t>(sizes_[a]) + static_cast<std::size_t>(coords[a]);
    }
    return values_[k];
  }

  /// Every value, row-major.
  const std::vector<R>& values() const noexcept { return values_; }
  auto begin() const noexcept { return values_.begin(); }
  auto end() const noexcept { return values_.end(); }

private:
  std::vector<std::string> names_;
  std::vector<std::int64_t> sizes_;
  std::vector<R> values_;
};

} // namespace am

#endif // ACTORMESH_ACTOR_MESH_MESH_VALUES_HPP
