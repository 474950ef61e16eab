/// The shardings of operation results, derived from their operands' shardings. Results are
/// memoized per (input sharding, parameters) so that repeated operations see the same sharding
/// object, which keeps the plan caches (keyed by sharding identity) hitting. The memo is bounded and
/// holds its input shardings weakly, so it never keeps a sharding alive.
#pragma once

#include "actormesh/sharding/sharding.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace am::detail {

/// Entries now in the memo of derived shardings (at most a few thousand; for tests).
std::size_t derived_sharding_memo_size();

/// Every device of `s` holds the whole array (same mesh, P(); or all positional sets merged).
sharding_ptr replicated_like(const sharding_ptr& s);

/// The sharding of `x.transpose(perm)` for an x of rank perm.size() laid out by `s`.
sharding_ptr transposed(const sharding_ptr& s, const std::vector<std::int64_t>& perm);

/// The sharding after reducing dims `axes` (sorted) of a rank-`ndim` array: the kept dims keep
/// their partitioning, the reduced dims' mesh axes become replication.
sharding_ptr reduced(const sharding_ptr& s, std::size_t ndim, const std::vector<std::int64_t>& axes);

/// The sharding after a reshape that keeps the leading `kept` dims: those keep their
/// partitioning when nothing after them is split; else replicated_like.
sharding_ptr reshaped(const sharding_ptr& s, std::size_t ndim, std::size_t kept);

/// The sharding of x @ y: x's row partitioning and y's column partitioning on one mesh, else x's
/// rows only.
sharding_ptr dot_result(const sharding_ptr& x, const sharding_ptr& y);

/// The sharding of a batched x @ y with x of rank `x_rank` ([..., m, k]) and y of rank `y_rank`:
/// x's batch and row partitioning, y's column partitioning when on the same mesh and not using an
/// axis x's dims use; else x's only.
sharding_ptr dot_result(const sharding_ptr& x, std::size_t x_rank, const sharding_ptr& y, std::size_t y_rank);

} // namespace am::detail
