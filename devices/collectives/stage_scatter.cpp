#include "devices/collectives/stage_scatter.hpp"

#include "actors/errors.hpp"
#include "devices/collectives/block_split.hpp"
#include "devices/collectives/shared_view.hpp"
#include "devices/collectives/stage_group.hpp"
#include "devices/collectives/stage_gather.hpp"
#include "devices/collectives/stage_reduction.hpp"
#include "devices/cpu/cpu_buffer.hpp"

#include <algorithm>
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
  std::size_t first = 0; // the position whose block starts `sum`
  if (g.processes.size() > 1) {
    // Rank r receives the r-th of equal blocks: its own devices' blocks (stage_scatters).
    auto received = make_cpu_buffer(s.type, {static_cast<std::int64_t>(block * s.parts.size())}, pool);
    across_processes(g, [&](communicator& comm) {
      if (split_block(count, comm.size(), comm.rank()).count != static_cast<std::size_t>(received->size()))
        throw runtime_error("internal: a scatter stage's block does not match its devices");
      comm.reduce_scatter(sum->data(), received->data(), count, s.type, reduce_op::sum);
    });
    sum = received;
    first = static_cast<std::size_t>(s.first_position);
  }
  for (std::size_t k = 0; k < s.results.size(); ++k) {
    auto at = (static_cast<std::size_t>(s.positions[k]) - first) * block;
    s.results[k].second.set_value(std::make_shared<shared_view>(sum, s.block_shape, s.results[k].first, at));
  }
}

} // namespace

bool stage_scatters(const std::vector<int>& owners) noexcept {
  // Runs in process order: the owners never decrease (each process then holds one run).
  return stage_gathers(owners) && std::is_sorted(owners.begin(), owners.end());
}

void issue_scatter(runtime_impl& rt, scatter_stage stage) {
  auto& g = group_for(rt, stage.devices, stage.processes);
  post_stage(g, std::move(stage), run_scatter);
}

} // namespace am::detail
