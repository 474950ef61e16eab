/// What the transformations (grad, vmap, pmap) need from tracing beyond jit: arrays that stand for
/// an existing graph node, shape-only arrays to trace a function on, and tracing a function into a
/// graph of its own.
#ifndef ACTORMESH_PARALLEL_DETAIL_TRACING_HPP
#define ACTORMESH_PARALLEL_DETAIL_TRACING_HPP

#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/detail/graph.hpp"
#include "actormesh/sharding/detail/trace.hpp"

#include <functional>
#include <vector>

namespace am::detail {

/// A function of arrays, as the transformations see it.
using array_function = std::function<std::vector<array>(const std::vector<array>&)>;

/// A tracer of trace `t` for its node `id`.
array tracer_of(trace_context& t, int id);

/// An array with a shape, a dtype and a sharding but no data: what a function is traced on.
array abstract_array(shape_t shape, am::dtype type, sharding_ptr layout);

/// A function traced on its own: its graph (inputs: the arguments, then the concrete arrays it
/// captured) and those captured arrays.
struct traced_function {
  graph g;
  std::vector<array> captured;
  /// With keep_effects: the debug effects `fn` made, in order, each with the number of its values;
  /// the values are the last outputs of `g`, after the function's own.
  std::vector<std::pair<std::function<void(const std::vector<host_array>&)>, std::size_t>> effects;
  std::size_t effect_outputs = 0; ///< how many of g's outputs are the effects' values
};

/// Traces `fn` on abstract arguments `args` (see abstract_array) into a graph of its own; the
/// trace is nested in the current one, if any. Tracers of an enclosing trace cannot be used by `fn`
/// (pass them as arguments). With `keep_effects`, debug effects in `fn` are kept (traced_function's
/// effects) for the caller to replay; without, they are refused.
traced_function trace_function(const array_function& fn, const std::vector<array>& args, bool keep_effects = false);

/// A constant of `shape` and `type` laid out by `layout` (recorded when tracing).
array filled(double value, const shape_t& shape, am::dtype type, const sharding_ptr& layout);

/// `x` with dim `from` moved to position `to` (numpy's moveaxis).
array moveaxis(const array& x, std::int64_t from, std::int64_t to);

} // namespace am::detail

#endif // ACTORMESH_PARALLEL_DETAIL_TRACING_HPP
