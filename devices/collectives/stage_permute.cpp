#include "devices/collectives/stage_permute.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/collectives/shared_view.hpp"
#include "devices/collectives/stage_group.hpp"
#include "devices/collectives/stage_positions.hpp"
#include "devices/cpu/cpu_buffer.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>

namespace am::detail {

namespace {

/// Per position on the axis, the rank of its process.
std::vector<std::size_t> ranks_of(const std::vector<int>& owners, const process_positions& positions) {
  std::vector<std::size_t> out(owners.size());
  std::size_t r = 0;
  for (auto& [process, at] : positions.of) {
    for (auto p : at)
      out[p] = r;
    ++r;
  }
  return out;
}

void run_permute(stage_group& g, permute_stage& s) {
  auto pool = result_pool(g, s.results, "a permute stage");
  auto elements = static_cast<std::size_t>(element_count(s.part_shape));
  auto part_bytes = elements * size_of(s.type);
  auto positions = positions_by_process(s.owners);
  auto& mine = positions.of[g.rt.process_index()];
  if (mine.size() != s.parts.size())
    throw runtime_error("internal: a permute stage with " + std::to_string(s.parts.size()) + " parts for "
                        + std::to_string(mine.size()) + " local positions");
  auto rank = ranks_of(s.owners, positions);
  auto me = mine.empty() ? 0 : rank[mine.front()];
  auto exchange = plan_exchange(s.owners, s.sources);
  bool crossing = g.processes.size() > 1 && exchange.slots > 0;
  auto received = crossing ? positions.of.size() * exchange.slots : 0;
  auto parts = wait_for_parts(s.parts, "a permute stage");
  std::map<std::size_t, std::size_t> local; // position -> its part
  for (std::size_t k = 0; k < mine.size(); ++k)
    local[mine[k]] = k;
  // [the slices received, a block per rank][zeros, where a local device receives none]: what
  // the results that do not view a local part view (a slice from a local device is viewed where
  // it is: no copy).
  std::size_t zeros = 0;
  for (auto p : s.positions)
    zeros = s.sources.at(static_cast<std::size_t>(p)) < 0 ? 1 : zeros;
  buffer_ref out;
  std::byte* dst = nullptr;
  if (received + zeros > 0) {
    out = make_cpu_buffer(s.type, {static_cast<std::int64_t>((received + zeros) * elements)}, pool);
    dst = static_cast<std::byte*>(out->data());
    std::memset(dst + received * part_bytes, 0, zeros * part_bytes);
  }
  if (crossing) {
    // Block j of the all-to-all's input goes to rank j: the slices it receives from this process,
    // then zeros up to the block's slots.
    std::unique_ptr<std::byte[]> sent(new std::byte[received * part_bytes]());
    for (std::size_t to = 0; to < positions.of.size(); ++to) {
      auto& moved = exchange.moves[me][to];
      for (std::size_t i = 0; i < moved.size(); ++i)
        std::memcpy(sent.get() + (to * exchange.slots + i) * part_bytes,
                    parts.data[local.at(static_cast<std::size_t>(moved[i]))], part_bytes);
    }
    across_processes(g, [&](communicator& comm) { comm.all_to_all(sent.get(), dst, received * elements, s.type); });
  }
  for (std::size_t k = 0; k < s.results.size(); ++k) {
    auto source = s.sources.at(static_cast<std::size_t>(s.positions.at(k)));
    auto& [device_id, done] = s.results[k];
    if (source >= 0 && rank[static_cast<std::size_t>(source)] == me) {
      auto& part = parts.buffers[local.at(static_cast<std::size_t>(source))];
      done.set_value(std::make_shared<shared_view>(part, s.shard_shape, device_id));
      continue;
    }
    auto slot = received; // zeros
    if (source >= 0) {
      auto from = rank[static_cast<std::size_t>(source)];
      auto& moved = exchange.moves[from][me];
      auto i = static_cast<std::size_t>(std::find(moved.begin(), moved.end(), source) - moved.begin());
      slot = from * exchange.slots + i;
    }
    done.set_value(std::make_shared<shared_view>(out, s.shard_shape, device_id, slot * elements));
  }
}

} // namespace

permute_exchange plan_exchange(const std::vector<int>& owners, const std::vector<int>& sources) {
  if (sources.size() != owners.size())
    throw runtime_error("internal: a permutation of " + std::to_string(sources.size()) + " positions over "
                        + std::to_string(owners.size()) + " devices");
  auto positions = positions_by_process(owners);
  auto rank = ranks_of(owners, positions);
  auto ranks = positions.of.size();
  permute_exchange out;
  out.moves.assign(ranks, std::vector<std::vector<int>>(ranks));
  for (std::size_t t = 0; t < sources.size(); ++t) {
    auto s = sources[t];
    if (s < 0)
      continue;
    if (static_cast<std::size_t>(s) >= owners.size())
      throw runtime_error("internal: a permutation's source " + std::to_string(s) + " out of range");
    auto from = rank[static_cast<std::size_t>(s)], to = rank[t];
    if (from == to)
      continue;
    out.moves[from][to].push_back(s);
    out.slots = std::max(out.slots, out.moves[from][to].size());
  }
  return out;
}

void issue_permute(runtime_context& rt, permute_stage stage) {
  auto& g = group_for(rt, stage.devices, stage.processes);
  post_stage(g, std::move(stage), run_permute);
}

} // namespace am::detail
