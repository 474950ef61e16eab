#include "devices/collectives/stage_scatter.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/collectives/block_split.hpp"
#include "devices/collectives/shared_view.hpp"
#include "devices/collectives/stage_group.hpp"
#include "devices/collectives/stage_positions.hpp"
#include "devices/collectives/stage_reduction.hpp"
#include "devices/cpu/cpu_buffer.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

namespace am::detail {

namespace {

void run_scatter(stage_group& g, scatter_stage& s) {
  auto pool = result_pool(g, s.results, "a scatter stage");
  auto count = static_cast<std::size_t>(element_count(s.part_shape));
  auto block = static_cast<std::size_t>(element_count(s.block_shape));
  auto parts = wait_for_parts(s.parts, "a scatter stage");
  buffer_ref sum = make_cpu_buffer(s.type, s.part_shape, pool);
  combine_parts(s.type, reduce_op::sum, parts.data, count, sum->data());
  parts = {};
  std::vector<std::size_t> slots; // per result, the block of `sum` it views
  for (auto p : s.positions)
    slots.push_back(static_cast<std::size_t>(p));
  if (g.processes.size() > 1) {
    // Rank r receives the r-th of equal blocks: process r's devices' blocks, in axis order, padded
    // with zeros to the most any process holds (the sum itself when the processes hold as many
    // positions each in runs in process order).
    auto positions = positions_by_process(s.owners);
    auto& mine = positions.of[g.rt.process_index()];
    auto ranks = positions.of.size();
    auto block_bytes = block * size_of(s.type);
    const void* input = sum->data();
    std::unique_ptr<std::byte[]> ordered;
    if (!positions.in_order) {
      ordered.reset(new std::byte[ranks * positions.slots * block_bytes]());
      std::size_t r = 0;
      for (auto& [process, at] : positions.of) {
        for (std::size_t k = 0; k < at.size(); ++k)
          std::memcpy(ordered.get() + (r * positions.slots + k) * block_bytes,
                      static_cast<const std::byte*>(sum->data()) + at[k] * block_bytes, block_bytes);
        ++r;
      }
      input = ordered.get();
    }
    auto total = ranks * positions.slots * block;
    auto received = make_cpu_buffer(s.type, {static_cast<std::int64_t>(positions.slots * block)}, pool);
    across_processes(g, [&](communicator& comm) {
      if (split_block(total, comm.size(), comm.rank()).count != static_cast<std::size_t>(received->size()))
        throw runtime_error("internal: a scatter stage's block does not match its devices");
      comm.reduce_scatter(input, received->data(), total, s.type, reduce_op::sum);
    });
    sum = received;
    for (auto& slot : slots)
      slot = static_cast<std::size_t>(std::find(mine.begin(), mine.end(), slot) - mine.begin());
  }
  for (std::size_t k = 0; k < s.results.size(); ++k)
    s.results[k].second.set_value(
      std::make_shared<shared_view>(sum, s.block_shape, s.results[k].first, slots[k] * block));
}

} // namespace

void issue_scatter(runtime_context& rt, scatter_stage stage) {
  auto& g = group_for(rt, stage.devices, stage.processes);
  post_stage(g, std::move(stage), run_scatter);
}

} // namespace am::detail
