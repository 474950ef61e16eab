/// Debug effects (am::debug_print, am::debug_callback) of a function traced on one example, moved
/// into the enclosing trace after the function was replayed over a mapped axis (vmap, pmap): the
/// callback runs once per example, in the order of the examples, each time with that example's
/// slice of every mapped value and the whole of every unmapped one, as JAX's batching rule for
/// debug callbacks does; an effect none of whose values is mapped runs once.
#ifndef ACTORMESH_PARALLEL_DETAIL_BATCHED_EFFECTS_HPP
#define ACTORMESH_PARALLEL_DETAIL_BATCHED_EFFECTS_HPP

#include "actormesh/parallel/detail/tracing.hpp"
#include "parallel/detail/batching.hpp"

#include <vector>

namespace am::detail {

/// Where the replayed effects' values are put before the callbacks see them.
struct effect_layouts {
  sharding_ptr mapped;   ///< mapped values (dim 0 the axis); null: the first mapped value's, replicated
  sharding_ptr unmapped; ///< unmapped values; null: where they are
};

/// Takes the effects' values off the end of `outs` (the last traced.effect_outputs of them) and
/// records each effect in the current trace, which must take effects (throws am::value_error if not).
/// A device's callback sees the examples of its own shard: all of them where the mapped values are
/// replicated, its slice where they are split over devices (pmap: one example per device).
void replay_batched_effects(const traced_function& traced, std::vector<batched>& outs, const effect_layouts& layouts);

} // namespace am::detail

#endif // ACTORMESH_PARALLEL_DETAIL_BATCHED_EFFECTS_HPP
