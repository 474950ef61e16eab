/// NamedSharding: a mesh plus a PartitionSpec (`jax.sharding.NamedSharding`).
#ifndef ACTORMESH_SHARDING_NAMED_SHARDING_HPP
#define ACTORMESH_SHARDING_NAMED_SHARDING_HPP

#include "actormesh/sharding/mesh.hpp"
#include "actormesh/sharding/partition_spec.hpp"
#include "actormesh/sharding/sharding.hpp"

#include <memory>

namespace am {

/// Splits array dimensions over named mesh axes; mesh axes the spec does not name are replication.
class named_sharding final : public sharding {
public:
  /// `NamedSharding(mesh, spec)`, checked on construction like JAX: a mesh axis used twice throws
  /// am::duplicate_spec_error, an axis missing from the mesh throws am::value_error.
  named_sharding(am::mesh m, partition_spec spec);

  /// The mesh.
  const am::mesh& mesh() const noexcept { return mesh_; }

  /// The spec as given (not padded to any rank).
  const partition_spec& spec() const noexcept { return spec_; }

  /// Mesh-flat order.
  const std::vector<device>& device_assignment() const noexcept override { return mesh_.flat_devices(); }

  /// Throws when the spec has more entries than `ndim`.
  void check_rank(std::size_t ndim) const override;

  /// Tiles per REFERENCE.md (see named_tile_layout).
  tile_layout layout(std::size_t ndim) const override;

  /// True when the mesh has one device or every named axis has size 1.
  bool is_fully_replicated() const override;

  /// `NamedSharding(mesh=Mesh('x': 4, 'y': 2), spec=P('x', 'y'))`.
  std::string to_string() const override;

  /// Same mesh and same spec (JAX's `==`; see is_equivalent_to for layout equality).
  friend bool operator==(const named_sharding& a, const named_sharding& b) {
    return a.mesh_ == b.mesh_ && a.spec_ == b.spec_;
  }

private:
  am::mesh mesh_;
  partition_spec spec_;
};

/// `std::make_shared<const named_sharding>(m, spec)`.
std::shared_ptr<const named_sharding> make_named_sharding(const am::mesh& m, const partition_spec& spec);

} // namespace am

#endif // ACTORMESH_SHARDING_NAMED_SHARDING_HPP
