/// The source kernels of fused regions: values that read no same-shaped operand. Constants, iota and
/// random values are computed from the element's position; gathers (broadcast_in_dim, slice,
/// transpose) read a materialized operand at strided positions.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/dtype.hpp"
#include "actormesh/actors/opcode.hpp"
#include "devices/cpu/cpu_kernels.hpp"

#include <cstdint>
#include <vector>

namespace am::detail {

/// Parameters of a constant: the element's bytes.
struct constant_params {
  alignas(8) unsigned char bytes[8] = {};
};

/// Parameters of a gather: result element at multi-index j reads operand element
/// `offset + sum(j[d] * strides[d])` (dims merged where possible; stride 0 repeats).
struct gather_params {
  shape_t shape;                     ///< result dims (merged)
  std::vector<std::int64_t> strides; ///< operand element strides per result dim
  std::int64_t offset = 0;           ///< operand element of the result's first element
};

/// Parameters of a random source: the element at local multi-index j has global linear index
/// `sum((offsets[d] + j[d]) * global_strides[d])`.
struct random_params {
  std::uint64_t key = 0;
  shape_t shape;                            ///< the local block
  std::vector<std::int64_t> offsets;        ///< where the block starts in the global array
  std::vector<std::int64_t> global_strides; ///< row-major strides of the global array
  bool ranged = false;                      ///< a float uniform in [low, low + span): JAX's range
  double low = 0;                           ///< minval, rounded to the dtype
  double span = 1;                          ///< maxval - minval, computed in the dtype
};

/// `value` converted to `type`, as a constant's parameters.
constant_params make_constant(double value, dtype type);

/// Fills the tile with the constant (params: constant_params).
tile_kernel constant_kernel(dtype type);

/// The row-major element index converted to `type` (no params).
tile_kernel iota_kernel(dtype type);

/// Gathers from `src[0]`, the operand's base pointer (params: gather_params).
tile_kernel gather_kernel(dtype type);

/// The gather of broadcast_in_dim (`dims` as its attrs) from `operand` to `result`.
gather_params broadcast_gather(const shape_t& operand, const shape_t& result,
                               const std::vector<std::int64_t>& dims);

/// The gather of a slice [starts, limits) of `operand` (attrs: starts then limits).
gather_params slice_gather(const shape_t& operand, const std::vector<std::int64_t>& attrs);

/// The gather of a transpose of `operand` by `permutation`.
gather_params transpose_gather(const shape_t& operand, const std::vector<std::int64_t>& permutation);

/// The parameters of a random source from its instruction's attrs and result shape.
random_params make_random(const std::vector<std::int64_t>& attrs, const shape_t& shape);

/// Row-major element strides of `shape`.
std::vector<std::int64_t> row_major_strides(const shape_t& shape);

} // namespace am::detail
