/// The state an am::array shares among its copies: either concrete shards, or a place in a trace.
#pragma once

#include "sharding/array.hpp"

#include <atomic>
#include <optional>

namespace am::detail {

class trace_context;

/// Shape, dtype, sharding and the shards (concrete) or the traced node (tracer).
struct array_state {
  shape_t shape;
  am::dtype type = am::dtype::float32;
  sharding_ptr layout;
  std::vector<shard> shards;       ///< concrete arrays: one per device, in device-id order
  std::atomic<bool> deleted{false};
  trace_context* trace = nullptr;  ///< tracers: the trace that owns the node
  int node = -1;                   ///< tracers: the node's index in that trace's graph
  /// Internal scalar operands: every element equals this value and there are no shards; the
  /// operation consuming it folds it into its own program as a constant (never seen by users).
  std::optional<double> lazy_constant;
};

/// The error for a deleted array: "Array has been deleted with shape=float32[8,2]."
[[noreturn]] void throw_deleted(const array_state& s);

/// `float32[8,2]`.
std::string aval_text(am::dtype type, const shape_t& shape);

} // namespace am::detail
