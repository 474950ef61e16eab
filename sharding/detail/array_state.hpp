/// The state an am::array shares among its copies: either concrete shards, or a place in a trace.
#pragma once

#include "actormesh/sharding/array.hpp"

#include <memory>
#include <mutex>
#include <optional>

namespace am::detail {

class trace_context;

/// The shards of a concrete array as one immutable list. Readers take the list (a reference count)
/// and work on it: deleting the array meanwhile drops only the array's own reference, so a list
/// being read is never changed under its reader, and calls already issued keep their inputs alive.
using shard_list = std::shared_ptr<const std::vector<shard>>;

/// Shape, dtype, sharding and the shards (concrete) or the traced node (tracer).
///
/// Thread safety: one array may be used from many threads while one of them deletes it; every
/// use either sees the shards (and completes) or sees the deletion (and throws JAX's error).
struct array_state {
  shape_t shape;
  am::dtype type = am::dtype::float32;
  sharding_ptr layout;
  trace_context* trace = nullptr;  ///< tracers: the trace that owns the node
  int node = -1;                   ///< tracers: the node's index in that trace's graph
  /// Internal scalar operands: every element equals this value and there are no shards; the
  /// operation consuming it folds it into its own program as a constant (never seen by users).
  std::optional<double> lazy_constant;

  /// Installs the shards of a concrete array (one per device, in device-id order), before the
  /// state is shared.
  void set_shards(std::vector<shard> shards);

  /// The shards; throws "Array has been deleted ..." once the array is deleted.
  shard_list shards() const;

  /// Deletes the array: later shards() calls throw. Returns false when it was already deleted.
  /// The buffers are freed when the last call that took them as input has finished.
  bool delete_shards();

  /// True once deleted.
  bool deleted() const;

private:
  mutable std::mutex mutex_;
  shard_list shards_;
  bool deleted_ = false;
};

/// The error for a deleted array: "Array has been deleted with shape=float32[8,2]."
[[noreturn]] void throw_deleted(const array_state& s);

/// `float32[8,2]`.
std::string aval_text(am::dtype type, const shape_t& shape);

} // namespace am::detail
