/// The bookkeeping of one lowering: program slots per (stage, device), where each node's blocks
/// live, and the import/export of values between slots. Internal to lowering*.cpp.
#pragma once

#include "actormesh/actors/program.hpp"
#include "actormesh/sharding/detail/graph.hpp"
#include "actormesh/sharding/detail/plan.hpp"

#include <deque>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace am::detail {

/// Where a block's data is: an argument's shard, or an instruction of a (stage, device) program.
struct value_source {
  bool argument = false;
  int arg = 0;          ///< argument number (argument sources)
  int position = 0;     ///< shard position in the argument's shard list (argument sources)
  device dev;           ///< the device holding the data
  int stage = 0;        ///< program stage (produced sources)
  std::int32_t instr = -1; ///< instruction in that program (produced sources)
};

/// A block of a value and where it is.
struct piece {
  value_source src;
  shard_index block;
};

/// One program under construction: for one device in one stage.
struct program_slot {
  explicit program_slot(std::string name) : builder(std::move(name)) {}

  program_builder builder;
  device dev;
  int stage = 0;
  std::vector<value_binding> inputs; ///< `call` bindings hold slot ids until the plan is built
  std::map<std::tuple<int, int, int>, std::int32_t> imports;
  std::vector<std::int32_t> outputs;
  std::map<std::int32_t, int> output_position;
};

/// The slots and the moves between them.
class lowering_state {
public:
  /// `name` prefixes program names.
  lowering_state(std::string name, const graph& g) : name_(std::move(name)), graph_(g) {}

  /// The slot of (stage, device), created on first use.
  program_slot& slot(int stage, const device& d);

  /// The instruction that holds `src`'s data in the program of (stage, d): the instruction itself,
  /// or a parameter importing an argument shard or another program's output.
  std::int32_t local(const value_source& src, int stage, const device& d);

  /// The first stage at which `src` can be used on `d`.
  static int available_stage(const value_source& src, const device& d);

  /// `src` (holding `held`) cut down to `want` on the device that has it.
  value_source slice_at(const value_source& src, const shard_index& held, const shard_index& want);

  /// A source for block `want` on `d`, assembled from `pieces` (which cover it); sets `stage` to the
  /// stage at which it is available on `d`.
  value_source assemble(const std::vector<piece>& pieces, const device& d, const shard_index& want,
                        int& stage);

  /// Marks a produced source as an output of its program; returns the binding readers use.
  value_binding export_value(const value_source& src);

  /// The binding of an output shard.
  value_binding bind_output(const value_source& src);

  /// The type of a source's value.
  value_type type_of(const value_source& src) const;

  /// Finishes: builds every program with outputs and maps slot ids to call indices.
  plan finish(std::vector<planned_output> outputs);

private:
  std::int32_t concatenate_grid(program_slot& s, std::vector<std::pair<std::int32_t, shard_index>> parts,
                                std::size_t dim);

  std::string name_;
  const graph& graph_;
  std::map<std::pair<int, int>, int> slot_ids_;
  std::deque<program_slot> slots_; // deque: references stay valid as slots are added
};

/// True when `outer` contains `inner` in every dimension.
bool contains(const shard_index& outer, const shard_index& inner);

/// The intersection of two blocks; empty optional when they do not overlap.
bool intersect(const shard_index& a, const shard_index& b, shard_index& out);

/// The extents of a block.
shape_t block_shape(const shard_index& b);

/// The block covering a whole array of `shape`.
shard_index full_block(const shape_t& shape);

} // namespace am::detail
