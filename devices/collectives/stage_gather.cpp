#include "devices/collectives/stage_gather.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/collectives/stage_group.hpp"
#include "devices/collectives/stage_positions.hpp"
#include "devices/collectives/shared_view.hpp"
#include "devices/cpu/cpu_buffer.hpp"

#include <cstring>
#include <memory>

namespace am::detail {

namespace {

void run_gather(stage_group& g, gather_stage& s) {
  auto pool = result_pool(g, s.results, "a gather stage");
  auto elements = static_cast<std::size_t>(element_count(s.part_shape));
  auto part_bytes = elements * size_of(s.type);
  auto out = make_cpu_buffer(s.type, s.shape, pool);
  auto* dst = static_cast<std::byte*>(out->data());
  int self = g.rt.process_index();
  auto positions = positions_by_process(s.owners);
  auto& mine = positions.of[self];
  if (mine.size() != s.parts.size() || mine.empty())
    throw runtime_error("internal: a gather stage with " + std::to_string(s.parts.size()) + " parts for "
                        + std::to_string(mine.size()) + " local positions");
  // In one process, or when the processes hold as many positions each in runs in process order,
  // the engine's blocks land where they belong: gather in place. Otherwise through a block per
  // process padded to the largest count (zeros), then each part placed at its position.
  auto block = positions.slots * part_bytes;
  auto rank = static_cast<std::size_t>(positions.rank_of(self));
  std::unique_ptr<std::byte[]> staging;
  std::byte* local = dst + mine.front() * part_bytes; // in place: this process's slot of the result
  if (!positions.in_order) { // only across processes
    staging.reset(new std::byte[block * positions.of.size()]());
    local = staging.get() + rank * block;
  }
  for (std::size_t k = 0; k < s.parts.size(); ++k) {
    auto part = s.parts[k].get();
    if (!part->host_accessible())
      throw runtime_error("internal: a gather stage got a part outside host memory");
    auto* at = positions.in_order ? dst + mine[k] * part_bytes : local + k * part_bytes;
    std::memcpy(at, part->data(), part_bytes);
  }
  if (g.processes.size() > 1) {
    auto* gathered = positions.in_order ? dst : staging.get();
    across_processes(g, [&](communicator& comm) { comm.all_gather(local, gathered, positions.slots * elements, s.type); });
    if (!positions.in_order) {
      std::size_t r = 0;
      for (auto& [process, at] : positions.of) {
        for (std::size_t k = 0; k < at.size(); ++k)
          std::memcpy(dst + at[k] * part_bytes, gathered + r * block + k * part_bytes, part_bytes);
        ++r;
      }
    }
  }
  for (auto& [device_id, done] : s.results)
    done.set_value(share_with(out, s.shape, device_id));
}

} // namespace

void issue_gather(runtime_context& rt, gather_stage stage) {
  auto& g = group_for(rt, stage.devices, stage.processes);
  post_stage(g, std::move(stage), run_gather);
}

} // namespace am::detail
