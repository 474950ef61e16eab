/// A lowered graph: per-shard programs for each device, in stages, and where each output shard comes
/// from. Running a plan sends every call at once; devices wait for inputs from other devices.
#ifndef ACTORMESH_SHARDING_DETAIL_PLAN_HPP
#define ACTORMESH_SHARDING_DETAIL_PLAN_HPP

#include "actormesh/actors/device_info.hpp"
#include "actormesh/actors/program.hpp"
#include "actormesh/sharding/sharding.hpp"

#include <memory>
#include <string>
#include <vector>

namespace am::detail {

/// Where a program input (or an output shard) comes from.
struct value_binding {
  /// An argument's shard (`index` = argument, `position` = the shard's position in its shard list),
  /// or an output of an earlier call (`index` = call, `position` = output number).
  enum class source : std::uint8_t { argument, call } from = source::call;
  int index = 0;
  int position = 0;
};

/// One message: a program for a device, and its inputs.
struct planned_call {
  device dev;
  int stage = 0;
  std::shared_ptr<const program> code;
  std::vector<value_binding> inputs;
};

/// One shard of an output array.
struct planned_shard {
  device dev;
  shard_index index;
  int replica_id = 0;
  value_binding data;
};

/// One output array.
struct planned_output {
  shape_t shape;
  am::dtype type = am::dtype::float32;
  sharding_ptr layout;
  std::vector<planned_shard> shards;
};

/// The whole lowered graph.
struct plan {
  std::vector<planned_call> calls; ///< in stage order
  std::vector<planned_output> outputs;
  int stages = 0;
};

/// The programs of a plan, one per call, for inspection.
std::string to_string(const plan& p);

} // namespace am::detail

#endif // ACTORMESH_SHARDING_DETAIL_PLAN_HPP
