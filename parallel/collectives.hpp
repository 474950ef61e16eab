/// Collectives over a named axis, for functions run by pmap (or vmap with an axis name), as
/// jax.lax's: every device of the axis calls the same collective in the same order. Outside a
/// pmap/vmap that binds the name they throw am::value_error("unbound axis name: i").
#ifndef ACTORMESH_PARALLEL_COLLECTIVES_HPP
#define ACTORMESH_PARALLEL_COLLECTIVES_HPP

#include "actormesh/sharding/array.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace am {

/// The sum of `x` over every device of the axis (each device gets the sum).
array psum(const array& x, const std::string& axis_name);
/// The mean of `x` over the axis.
array pmean(const array& x, const std::string& axis_name);
/// The elementwise maximum of `x` over the axis.
array pmax(const array& x, const std::string& axis_name);
/// The elementwise minimum of `x` over the axis.
array pmin(const array& x, const std::string& axis_name);

/// Every device's `x`, stacked along a new dim `axis` (tiled = false), or concatenated along the
/// existing dim `axis` (tiled = true).
array all_gather(const array& x, const std::string& axis_name, std::int64_t axis = 0, bool tiled = false);

/// Device `dst` receives the `x` of device `src` for every (src, dst) pair; a device that is no
/// destination gets zeros. Sources and destinations must be unique.
array ppermute(const array& x, const std::string& axis_name, const std::vector<std::pair<int, int>>& perm);

/// The sum over the axis, scattered: device i gets block i of the sum along `scatter_dimension`
/// (whose size must equal the axis size, or with tiled = true be divisible by it; untiled, that
/// dim is dropped).
array psum_scatter(const array& x, const std::string& axis_name, std::int64_t scatter_dimension = 0,
                   bool tiled = false);

/// This device's position along the axis (an int32 scalar).
array axis_index(const std::string& axis_name);

/// The number of devices along the axis.
std::int64_t axis_size(const std::string& axis_name);

} // namespace am

#endif // ACTORMESH_PARALLEL_COLLECTIVES_HPP
