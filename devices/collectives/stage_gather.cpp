#include "devices/collectives/stage_gather.hpp"

#include "actors/errors.hpp"
#include "devices/collectives/stage_group.hpp"
#include "devices/collectives/shared_view.hpp"
#include "devices/cpu/cpu_buffer.hpp"

#include <cstring>
#include <map>
#include <memory>

namespace am::detail {

namespace {

void run_gather(stage_group& g, gather_stage& s) {
  auto pool = result_pool(g, s.results, "a gather stage");
  auto elements = static_cast<std::size_t>(element_count(s.part_shape));
  auto part_bytes = elements * size_of(s.type);
  // A ppermute's buffer holds one more part, of zeros, for devices that receive no slice.
  bool permute = !s.sources.empty();
  auto total = s.owners.size() + (permute ? 1 : 0);
  auto out = make_cpu_buffer(s.type, permute ? shape_t{static_cast<std::int64_t>(total * elements)} : s.shape, pool);
  auto* dst = static_cast<std::byte*>(out->data());
  if (permute)
    std::memset(dst + s.owners.size() * part_bytes, 0, part_bytes);
  int self = g.rt.process_index();
  // Positions per process, in axis order; this process's parts go to its own positions.
  std::map<int, std::vector<std::size_t>> positions;
  for (std::size_t p = 0; p < s.owners.size(); ++p)
    positions[s.owners[p]].push_back(p);
  auto& mine = positions[self];
  if (mine.size() != s.parts.size())
    throw runtime_error("internal: a gather stage with " + std::to_string(s.parts.size()) + " parts for "
                        + std::to_string(mine.size()) + " local positions");
  // In one process, or when the processes' positions are runs in process order, the engine's
  // blocks land where they belong: gather in place. Otherwise through a block per process.
  bool in_place = true;
  std::size_t next = 0;
  for (auto& [process, at] : positions)
    for (auto p : at)
      in_place = in_place && p == next++;
  auto block = mine.size() * part_bytes;
  std::unique_ptr<std::byte[]> staging;
  std::byte* local = dst + mine.front() * part_bytes; // in place: this process's slot of the result
  if (!in_place) { // only across processes: one process's positions are 0, 1, ...
    staging.reset(new std::byte[block * (g.processes.size() + 1)]);
    local = staging.get();
  }
  for (std::size_t k = 0; k < s.parts.size(); ++k) {
    auto part = s.parts[k].get();
    if (!part->host_accessible())
      throw runtime_error("internal: a gather stage got a part outside host memory");
    auto* at = in_place ? dst + mine[k] * part_bytes : local + k * part_bytes;
    std::memcpy(at, part->data(), part_bytes);
  }
  if (g.processes.size() > 1) {
    auto* gathered = in_place ? dst : staging.get() + block;
    auto count = mine.size() * static_cast<std::size_t>(element_count(s.part_shape));
    across_processes(g, [&](communicator& comm) { comm.all_gather(local, gathered, count, s.type); });
    if (!in_place) {
      std::size_t rank = 0;
      for (auto& [process, at] : positions) {
        for (std::size_t k = 0; k < at.size(); ++k)
          std::memcpy(dst + at[k] * part_bytes, gathered + rank * block + k * part_bytes, part_bytes);
        ++rank;
      }
    }
  }
  for (std::size_t k = 0; k < s.results.size(); ++k) {
    auto& [device_id, done] = s.results[k];
    if (!permute) {
      done.set_value(share_with(out, s.shape, device_id));
      continue;
    }
    auto from = s.sources.at(k) < 0 ? s.owners.size() : static_cast<std::size_t>(s.sources[k]);
    done.set_value(std::make_shared<shared_view>(out, s.shape, device_id, from * elements));
  }
}

} // namespace

bool stage_gathers(const std::vector<int>& owners) noexcept {
  std::map<int, std::size_t> counts;
  for (int p : owners)
    ++counts[p];
  for (auto& [p, n] : counts)
    if (n != counts.begin()->second)
      return false;
  return !owners.empty();
}

void issue_gather(runtime_impl& rt, gather_stage stage) {
  auto& g = group_for(rt, stage.devices, stage.processes);
  post_stage(g, std::move(stage), run_gather);
}

} // namespace am::detail
