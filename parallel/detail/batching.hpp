/// The batching rewrite behind vmap and pmap: a function traced on one example (one device's
/// slice) is replayed on values that carry the mapped axis as their leading dim, node by node,
/// as array operations recorded into the current trace. Values the axis does not reach stay
/// unmapped (the same for every example). Collectives over the mapped axis become operations
/// across that dim: under pmap the dim is sharded one slice per device, so they lower to
/// per-device programs with stages between them (sharding/detail/lowering.hpp).
#pragma once

#include "actormesh/parallel/detail/tracing.hpp"

#include <string>
#include <vector>

namespace am::detail {

/// A replayed value: `mapped` when its dim 0 is the mapped axis.
struct batched {
  array value;
  bool mapped = false;
};

/// The mapped axis of a replay.
struct batch_axis {
  std::string name;           ///< collectives over this name are rewritten (empty: none)
  std::int64_t size = 0;      ///< its size
  sharding_ptr mapped_layout; ///< pmap: one slice per device along dim 0; vmap: none (derived)
  sharding_ptr fresh_layout;  ///< the layout of values the replay makes itself (axis_index)
};

/// Replays `fn` (traced on one example) on `args` (its arguments, mapped or not; the captured
/// arrays follow as unmapped) and returns its outputs.
std::vector<batched> batch_function(const traced_function& fn, const std::vector<batched>& args,
                                    const batch_axis& axis);

/// Replays only what `wanted` (node ids of `fn`'s graph) needs, starting from `known` (node id ->
/// value, inputs included; captured arrays are used where needed and not known): the segments of a
/// pmap with collective stages (staged_pmap.hpp). Returns the values of `wanted`, in order.
std::vector<batched> batch_nodes(const traced_function& fn, const std::vector<std::pair<int, batched>>& known,
                                 const std::vector<int>& wanted, const batch_axis& axis);

/// `b` as a mapped value (an unmapped one is broadcast along a new dim 0).
array as_mapped(const batched& b, const batch_axis& axis);

/// The layout of a mapped value derived from `like` (pmap: its mapped layout).
sharding_ptr mapped_layout(const batch_axis& axis, const array& like);

} // namespace am::detail
