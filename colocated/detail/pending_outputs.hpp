/// The outputs of an asynchronous colocated call: arrays of the promised specs whose shards are
/// futures, handed to the caller at once, and resolved from the body's results once it has run.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/future.hpp"
#include "actormesh/colocated/detail/flat_tree.hpp"
#include "actormesh/colocated/specs.hpp"

#include <exception>
#include <utility>
#include <vector>

namespace am::detail {

/// The writing end: one promise per shard of each output array.
class pending_outputs {
public:
  /// Makes the output arrays for `specs` (each leaf needs a sharding) and their promises.
  static std::pair<std::vector<array>, pending_outputs> make(const spec_tree& specs);

  /// Resolves every shard from the body's results: each output shard gets the buffer of the
  /// result's shard on the same device once that is computed. Results that do not match the specs
  /// (structure, shape, dtype, layout) fail every output with am::value_error.
  void resolve(const flat_tree& results) const;

  /// Fails every output with `error`.
  void fail(const std::exception_ptr& error) const;

private:
  struct output_shards {
    std::vector<std::pair<device, promise<buffer_ref>>> shards;
  };

  spec_tree specs_;
  std::vector<output_shards> outputs_;
};

/// Throws am::value_error unless `results` match `specs`: the same structure, and per leaf the same
/// shape and dtype and a sharding placing the same blocks on the same devices.
void check_results_match(const spec_tree& specs, const flat_tree& results);

} // namespace am::detail
