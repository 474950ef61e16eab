/// The reduction operators of collectives (JAX: psum, pmean, pmax, pmin).
#ifndef ACTORMESH_DEVICES_COLLECTIVES_REDUCE_OP_HPP
#define ACTORMESH_DEVICES_COLLECTIVES_REDUCE_OP_HPP

#include <cstdint>
#include <string_view>

namespace am {

/// How all_reduce and reduce_scatter combine the ranks' values, element by element.
///
/// - sum: integers wrap in their own type (as JAX's psum); floats add (float16 and bfloat16 are
///   accumulated in float32 and rounded once, as numpy's float32 sum then cast).
/// - mean: the sum divided by the number of ranks, floating dtypes only. JAX's pmean divides the
///   integer psum with true division and so returns a float array for integer input; a buffer
///   cannot change its dtype, so integer and bool input is refused with am::type_error: reduce with
///   sum and divide in the float type you want.
/// - max, min: NaN wins (IEEE 754-2019 maximum/minimum, as lax.max); +0 is larger than -0, so the
///   result does not depend on the order in which ranks are combined. On bool, max is logical or
///   and min logical and. bool has no sum (JAX's reductions refuse bool sums too).
enum class reduce_op : std::uint8_t {
  sum,
  mean,
  max,
  min,
};

/// The operator's name as signatures and errors print it ("sum", "mean", "max", "min").
constexpr std::string_view name(reduce_op op) noexcept {
  switch (op) {
    case reduce_op::sum: return "sum";
    case reduce_op::mean: return "mean";
    case reduce_op::max: return "max";
    case reduce_op::min: return "min";
  }
  return "?";
}

} // namespace am

#endif // ACTORMESH_DEVICES_COLLECTIVES_REDUCE_OP_HPP
