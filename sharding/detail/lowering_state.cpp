#include "sharding/detail/lowering_state.hpp"

#include "actormesh/actors/errors.hpp"

#include <algorithm>

namespace am::detail {

bool contains(const shard_index& outer, const shard_index& inner) {
  for (std::size_t d = 0; d < inner.size(); ++d)
    if (inner[d].start < outer[d].start || inner[d].stop > outer[d].stop)
      return false;
  return true;
}

bool intersect(const shard_index& a, const shard_index& b, shard_index& out) {
  out.resize(a.size());
  for (std::size_t d = 0; d < a.size(); ++d) {
    out[d].start = std::max(a[d].start, b[d].start);
    out[d].stop = std::min(a[d].stop, b[d].stop);
    if (out[d].stop <= out[d].start)
      return false;
  }
  return true;
}

shape_t block_shape(const shard_index& b) {
  shape_t s;
  for (auto& r : b)
    s.push_back(r.size());
  return s;
}

shard_index full_block(const shape_t& shape) {
  shard_index b;
  for (auto n : shape)
    b.push_back({0, n});
  return b;
}

program_slot& lowering_state::slot(int stage, const device& d) {
  auto key = std::make_pair(stage, d.id);
  auto it = slot_ids_.find(key);
  if (it != slot_ids_.end())
    return slots_[static_cast<std::size_t>(it->second)];
  slot_ids_.emplace(key, static_cast<int>(slots_.size()));
  auto& s = slots_.emplace_back(name_ + ".s" + std::to_string(stage) + ".d" + std::to_string(d.id));
  s.dev = d;
  s.stage = stage;
  return s;
}

int lowering_state::available_stage(const value_source& src, const device& d) {
  if (src.argument)
    return 0;
  return src.dev.id == d.id ? src.stage : src.stage + 1;
}

value_type lowering_state::type_of(const value_source& src) const {
  if (src.argument) {
    auto& in = graph_.nodes[static_cast<std::size_t>(graph_.inputs[static_cast<std::size_t>(src.arg)])];
    auto placements = in.layout->shard_placements(in.shape);
    return {in.type, block_shape(placements[static_cast<std::size_t>(src.position)].index)};
  }
  auto key = std::make_pair(src.stage, src.dev.id);
  auto& s = slots_[static_cast<std::size_t>(slot_ids_.at(key))];
  return s.builder.type_of(src.instr);
}

value_binding lowering_state::export_value(const value_source& src) {
  auto& s = slot(src.stage, src.dev);
  auto [it, fresh] = s.output_position.emplace(src.instr, static_cast<int>(s.outputs.size()));
  if (fresh) {
    s.outputs.push_back(src.instr);
    s.builder.output(src.instr);
  }
  return {value_binding::source::call, slot_ids_.at({src.stage, src.dev.id}), it->second};
}

value_binding lowering_state::bind_output(const value_source& src) {
  if (src.argument)
    return {value_binding::source::argument, src.arg, src.position};
  return export_value(src);
}

std::int32_t lowering_state::local(const value_source& src, int stage, const device& d) {
  if (!src.argument && src.dev.id == d.id && src.stage == stage)
    return src.instr;
  if (stage < available_stage(src, d))
    throw runtime_error("internal: value used before it is available (lowering bug)");
  value_binding binding = src.argument ? value_binding{value_binding::source::argument, src.arg, src.position}
                                       : export_value(src);
  auto type = type_of(src);
  auto& s = slot(stage, d);
  auto key = std::make_tuple(static_cast<int>(binding.from), binding.index, binding.position);
  auto it = s.imports.find(key);
  if (it != s.imports.end())
    return it->second;
  auto instr = s.builder.parameter(type);
  s.inputs.push_back(binding);
  s.imports.emplace(key, instr);
  return instr;
}

value_source lowering_state::slice_at(const value_source& src, const shard_index& held, const shard_index& want) {
  if (held == want)
    return src;
  int stage = src.argument ? 0 : src.stage;
  auto in = local(src, stage, src.dev);
  std::vector<std::int64_t> starts, limits;
  for (std::size_t d = 0; d < want.size(); ++d) {
    starts.push_back(want[d].start - held[d].start);
    limits.push_back(want[d].stop - held[d].start);
  }
  auto& s = slot(stage, src.dev);
  value_source out;
  out.dev = src.dev;
  out.stage = stage;
  out.instr = s.builder.slice(in, starts, limits);
  return out;
}

std::int32_t lowering_state::concatenate_grid(program_slot& s, std::vector<std::pair<std::int32_t, shard_index>> parts,
                                              std::size_t dim) {
  if (parts.size() == 1)
    return parts.front().first;
  std::sort(parts.begin(), parts.end(), [dim](auto& a, auto& b) {
    return a.second[dim].start < b.second[dim].start;
  });
  std::vector<std::vector<std::pair<std::int32_t, shard_index>>> groups;
  for (auto& p : parts) {
    if (groups.empty() || groups.back().front().second[dim] != p.second[dim])
      groups.emplace_back();
    groups.back().push_back(p);
  }
  if (groups.size() == 1)
    return concatenate_grid(s, std::move(parts), dim + 1);
  std::vector<std::int32_t> joined;
  for (auto& g : groups)
    joined.push_back(concatenate_grid(s, std::move(g), dim + 1));
  return s.builder.concatenate(joined, static_cast<std::int64_t>(dim));
}

value_source lowering_state::assemble(const std::vector<piece>& pieces, const device& d, const shard_index& want,
                                      int& stage) {
  const piece* holder = nullptr;
  for (auto& p : pieces)
    if (contains(p.block, want) && (holder == nullptr || (p.src.dev.id == d.id && holder->src.dev.id != d.id)))
      holder = &p;
  if (holder != nullptr) {
    auto src = slice_at(holder->src, holder->block, want);
    stage = available_stage(src, d);
    return src;
  }
  // Intersect with one piece per distinct block, preferring pieces already on `d`.
  std::vector<const piece*> chosen;
  for (auto& p : pieces) {
    auto same = std::find_if(chosen.begin(), chosen.end(), [&](const piece* c) { return c->block == p.block; });
    if (same == chosen.end())
      chosen.push_back(&p);
    else if (p.src.dev.id == d.id && (*same)->src.dev.id != d.id)
      *same = &p;
  }
  std::vector<std::pair<value_source, shard_index>> parts;
  stage = 0;
  std::int64_t covered = 0;
  for (auto* p : chosen) {
    shard_index overlap;
    if (!intersect(p->block, want, overlap))
      continue;
    auto src = slice_at(p->src, p->block, overlap);
    stage = std::max(stage, available_stage(src, d));
    covered += element_count(block_shape(overlap));
    parts.emplace_back(src, overlap);
  }
  if (covered != element_count(block_shape(want)))
    throw runtime_error("internal: the pieces of a value do not cover the block a device needs");
  auto& s = slot(stage, d);
  std::vector<std::pair<std::int32_t, shard_index>> local_parts;
  for (auto& [src, block] : parts)
    local_parts.emplace_back(local(src, stage, d), block);
  value_source out;
  out.dev = d;
  out.stage = stage;
  out.instr = concatenate_grid(s, std::move(local_parts), 0);
  return out;
}

plan lowering_state::finish(std::vector<planned_output> outputs) {
  std::vector<int> order(slots_.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [this](int a, int b) {
    auto& x = slots_[static_cast<std::size_t>(a)];
    auto& y = slots_[static_cast<std::size_t>(b)];
    return std::tie(x.stage, x.dev.id) < std::tie(y.stage, y.dev.id);
  });
  std::vector<int> call_of(slots_.size(), -1);
  plan p;
  for (int id : order) {
    auto& s = slots_[static_cast<std::size_t>(id)];
    if (s.outputs.empty())
      continue;
    call_of[static_cast<std::size_t>(id)] = static_cast<int>(p.calls.size());
    p.calls.push_back({s.dev, s.stage, s.builder.build(), s.inputs});
    p.stages = std::max(p.stages, s.stage + 1);
  }
  auto remap = [&](value_binding& b) {
    if (b.from == value_binding::source::call)
      b.index = call_of[static_cast<std::size_t>(b.index)];
  };
  for (auto& c : p.calls)
    for (auto& b : c.inputs)
      remap(b);
  for (auto& o : outputs)
    for (auto& sh : o.shards)
      remap(sh.data);
  p.outputs = std::move(outputs);
  return p;
}

} // namespace am::detail
