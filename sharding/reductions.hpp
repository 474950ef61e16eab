/// Reductions over all elements or some axes. Each device reduces its own block, then the partial
/// results of the blocks along the reduced axes are combined device to device.
#ifndef ACTORMESH_SHARDING_REDUCTIONS_HPP
#define ACTORMESH_SHARDING_REDUCTIONS_HPP

#include "actormesh/sharding/array.hpp"

#include <vector>

namespace am {

/// Sum of all elements (a rank-0 array). bool/uint8/int32 sum as int64, like numpy on 64-bit Linux.
array sum(const array& x);
/// Sum over `axes` (negative counts from the end); the reduced dims are dropped.
array sum(const array& x, std::vector<std::int64_t> axes);
/// Mean of all elements (integers give float64).
array mean(const array& x);
/// Mean over `axes`.
array mean(const array& x, std::vector<std::int64_t> axes);
/// Largest element (NaN if any is NaN). An empty array: am::value_error "zero-size array to
/// reduction operation max which has no identity", as jax.numpy says.
array max(const array& x);
/// Largest element over `axes`; refused as above when one of `axes` has extent 0.
array max(const array& x, std::vector<std::int64_t> axes);
/// Smallest element (NaN if any is NaN); refused like max for an empty array ("... operation min ...").
array min(const array& x);
/// Smallest element over `axes`; refused when one of `axes` has extent 0.
array min(const array& x, std::vector<std::int64_t> axes);

} // namespace am

#endif // ACTORMESH_SHARDING_REDUCTIONS_HPP
