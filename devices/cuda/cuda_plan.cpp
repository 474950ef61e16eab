#include "devices/cuda/cuda_plan.hpp"

#include <algorithm>
#include <optional>

namespace am::detail::cuda {

namespace {

bool is_source(opcode op) {
  return op == opcode::iota || op == opcode::random_uniform || op == opcode::random_normal;
}

/// Can join an elementwise region (computed at the region's element index).
bool fusible(opcode op) {
  return is_elementwise(op) || is_source(op) || op == opcode::broadcast_in_dim;
}

void add_unique(std::vector<std::int32_t>& v, std::int32_t x) {
  if (std::find(v.begin(), v.end(), x) == v.end())
    v.push_back(x);
}

/// The values a stage reads from buffers.
std::vector<std::int32_t> reads(const stage& s, const program& p) {
  if (s.kind == stage::kind_t::fused)
    return s.inputs;
  auto& ops = p.code[static_cast<std::size_t>(s.instruction)].operands;
  return {ops.begin(), ops.end()};
}

/// The values a stage writes to buffers.
std::vector<std::int32_t> writes(const stage& s) {
  if (s.kind == stage::kind_t::fused)
    return s.outputs;
  return {s.instruction};
}

/// Fills in the inputs, outputs and scalars of a fused region from who uses its members.
void wire_region(stage& r, const program& p, const execution_plan& plan,
                 const std::vector<std::vector<std::int32_t>>& users) {
  auto member = [&](std::int32_t v) {
    return std::find(r.members.begin(), r.members.end(), v) != r.members.end();
  };
  for (auto m : r.members) {
    for (auto o : p.code[static_cast<std::size_t>(m)].operands) {
      auto root = plan.constant_root[static_cast<std::size_t>(o)];
      if (root >= 0)
        add_unique(r.scalars, root);
      else if (!member(o))
        add_unique(r.inputs, o);
    }
    bool needed_outside = std::find(p.outputs.begin(), p.outputs.end(), m) != p.outputs.end();
    for (auto u : users[static_cast<std::size_t>(m)])
      needed_outside = needed_outside || !member(u);
    if (needed_outside)
      r.outputs.push_back(m);
  }
}

/// Marks each value for release after the last stage that reads it (or that writes it, when no
/// stage reads it), unless the program returns it.
void plan_releases(execution_plan& plan, const program& p) {
  std::vector<int> last(p.code.size(), -1);
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    for (auto v : writes(plan.stages[s]))
      last[static_cast<std::size_t>(v)] = std::max(last[static_cast<std::size_t>(v)], static_cast<int>(s));
    for (auto v : reads(plan.stages[s], p))
      last[static_cast<std::size_t>(v)] = static_cast<int>(s);
  }
  for (std::size_t v = 0; v < last.size(); ++v) {
    bool returned = std::find(p.outputs.begin(), p.outputs.end(), static_cast<std::int32_t>(v)) != p.outputs.end();
    if (last[v] >= 0 && !returned)
      plan.stages[static_cast<std::size_t>(last[v])].release.push_back(static_cast<std::int32_t>(v));
  }
}

} // namespace

execution_plan plan_program(const program& p, bool fuse) {
  execution_plan plan;
  auto n = p.code.size();
  plan.constant_root.assign(n, -1);
  auto single = [](std::int32_t j) {
    stage s;
    s.instruction = j;
    return s;
  };
  if (!fuse) {
    for (std::size_t j = 0; j < n; ++j)
      if (p.code[j].op != opcode::parameter)
        plan.stages.push_back(single(static_cast<std::int32_t>(j)));
    plan_releases(plan, p);
    return plan;
  }

  std::vector<std::vector<std::int32_t>> users(n);
  for (std::size_t j = 0; j < n; ++j)
    for (auto o : p.code[j].operands)
      users[static_cast<std::size_t>(o)].push_back(static_cast<std::int32_t>(j));

  std::vector<int> region_of(n, -1);
  std::vector<bool> filled(n, false);
  std::optional<stage> open;
  int open_id = -1;
  int next_id = 0;
  auto in_open = [&](std::int32_t v) { return open && region_of[static_cast<std::size_t>(v)] == open_id; };
  auto close = [&] {
    if (open)
      plan.stages.push_back(std::move(*open));
    open.reset();
    open_id = -1;
  };
  // A deferred constant that a single stage or the caller needs gets a fill stage of its own.
  auto materialize = [&](std::int32_t v) {
    if (plan.constant_root[static_cast<std::size_t>(v)] >= 0 && !filled[static_cast<std::size_t>(v)]) {
      plan.stages.push_back(single(v));
      filled[static_cast<std::size_t>(v)] = true;
    }
  };

  for (std::size_t jj = 0; jj < n; ++jj) {
    auto j = static_cast<std::int32_t>(jj);
    auto& ins = p.code[jj];
    if (ins.op == opcode::parameter)
      continue;
    if (ins.op == opcode::constant) {
      plan.constant_root[jj] = j;
      continue;
    }
    if (ins.op == opcode::reshape || ins.op == opcode::broadcast_in_dim) {
      auto root = plan.constant_root[static_cast<std::size_t>(ins.operands[0])];
      if (root >= 0) {
        plan.constant_root[jj] = root;
        continue;
      }
    }
    if (ins.op == opcode::reshape) {
      if (in_open(ins.operands[0])) {
        open->members.push_back(j);
        region_of[jj] = open_id;
      } else {
        plan.stages.push_back(single(j)); // an alias of a materialized buffer: no kernel
      }
      continue;
    }
    if (fusible(ins.op)) {
      if (ins.op == opcode::broadcast_in_dim && in_open(ins.operands[0]))
        close(); // the operand is read at other indices: it must be in a buffer first
      auto count = element_count(ins.type.shape);
      if (open && open->elements != count)
        close();
      if (!open) {
        open.emplace();
        open->kind = stage::kind_t::fused;
        open->elements = count;
        open_id = next_id++;
      }
      open->members.push_back(j);
      region_of[jj] = open_id;
      continue;
    }
    // Structural: reads buffers. Independent of the open region, it may run before it.
    for (auto o : ins.operands)
      if (in_open(o))
        close();
    for (auto o : ins.operands)
      materialize(o);
    plan.stages.push_back(single(j));
  }
  close();
  for (auto o : p.outputs)
    materialize(o);
  for (auto& s : plan.stages)
    if (s.kind == stage::kind_t::fused)
      wire_region(s, p, plan, users);
  plan_releases(plan, p);
  return plan;
}

bool runs_as_single(const stage& s) {
  return s.kind == stage::kind_t::fused && s.members.size() == 1 && s.scalars.empty();
}

} // namespace am::detail::cuda
