#include "actormesh/parallel/detail/staged_pmap.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/collectives/stage_gather.hpp"
#include "devices/collectives/stage_nccl.hpp"
#include "devices/collectives/stage_permute.hpp"
#include "devices/collectives/stage_reduction.hpp"
#include "devices/collectives/stage_scatter.hpp"
#include "devices/runtime_context.hpp"
#include "parallel/detail/axis_env.hpp"
#include "parallel/detail/batching.hpp"
#include "parallel/detail/batching_collectives.hpp"
#include "parallel/detail/collective_node.hpp"
#include "parallel/detail/mapping.hpp"
#include "sharding/detail/addressable.hpp"
#include "sharding/detail/array_state.hpp"
#include "sharding/detail/elementwise.hpp"
#include "actormesh/sharding/detail/trace.hpp"
#include "actormesh/sharding/shape_ops.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

namespace am::detail {

namespace {

/// One segment: the programs between two stages.
struct segment {
  std::vector<int> externals; ///< nodes it takes as inputs (arguments, stages, earlier segments)
  std::vector<int> wanted;    ///< nodes it computes for later segments, stages or the outputs
  plan_cache plans{"pmap.segment"};
  std::mutex mutex;
  std::vector<char> mapped;   ///< per wanted node, known once traced
};

/// The staged form of the function for one signature.
struct staged_program {
  bool staged = false; ///< false: no stage (the one-plan path runs it)
  bool across_processes = false; ///< the mapped devices belong to several processes
  traced_function traced;
  std::vector<std::vector<int>> stages; ///< before segment k: the reductions run there, in node order
  std::vector<std::unique_ptr<segment>> segments;
};

/// Below this many bytes per device, a reduction within one process stays inside the plan: a
/// stage's hop to its worker thread and back costs more than moving a few KiB between devices
/// (doc/pmap.md, "How it runs").
constexpr std::int64_t stage_min_bytes = 64 << 10;

/// What a stage does: gather the parts (for all of them, or each device its source's: a
/// ppermute), sum them and scatter the blocks, or reduce them with `op`.
struct stage_kind {
  bool gather = false;
  bool scatter = false;
  bool permute = false;
  reduce_op op = reduce_op::sum;
};

/// The stage a node is, when it is one over the axis `name` of `p`'s devices: a psum, pmean,
/// pmax or pmin of float32/float64, an all_gather or ppermute, or a psum_scatter of float32/float64
/// along any dimension; over devices of several processes every such
/// node is, within one process those of stage_min_bytes or more a device (a psum_scatter's
/// operand).
std::optional<stage_kind> stage_of(const node& n, const std::string& name, const staged_program& p) {
  if (n.kind != node_kind::collective || name.empty())
    return std::nullopt;
  auto& c = collective_of(n);
  if (c.axis_name != name)
    return std::nullopt;
  auto scale = c.kind == collective_kind::psum_scatter ? c.axis_size : 1;
  if (!p.across_processes
      && element_count(n.shape) * scale * static_cast<std::int64_t>(size_of(n.type)) < stage_min_bytes)
    return std::nullopt;
  stage_kind k;
  switch (c.kind) {
    case collective_kind::psum: k.op = reduce_op::sum; break;
    case collective_kind::pmean: k.op = reduce_op::mean; break;
    case collective_kind::pmax: k.op = reduce_op::max; break;
    case collective_kind::pmin: k.op = reduce_op::min; break;
    case collective_kind::all_gather:
      k.gather = true;
      return k;
    case collective_kind::ppermute:
      k.permute = true;
      return k;
    case collective_kind::psum_scatter:
      k.scatter = true;
      break;
    default: return std::nullopt;
  }
  if (!stage_reduces(n.type, k.op))
    return std::nullopt;
  return k;
}

/// Cuts the traced graph at its stages (see the header).
void analyse(staged_program& p, std::size_t arguments, const std::string& name) {
  auto& g = p.traced.g;
  auto count = g.nodes.size();
  std::vector<char> candidate(count, 0), live(count, 0), argument(count, 0), captured(count, 0);
  for (std::size_t k = 0; k < g.inputs.size(); ++k)
    (k < arguments ? argument : captured)[static_cast<std::size_t>(g.inputs[k])] = 1;
  for (std::size_t i = 0; i < count; ++i)
    candidate[i] = stage_of(g.nodes[i], name, p).has_value();
  for (int o : g.outputs)
    live[static_cast<std::size_t>(o)] = 1;
  for (std::size_t i = count; i-- > 0;)
    if (live[i])
      for (int m : g.nodes[i].operands)
        live[static_cast<std::size_t>(m)] = 1;
  std::vector<int> phase(count, 0);
  int last = 0;
  bool any = false;
  for (std::size_t i = 0; i < count; ++i) {
    for (int m : g.nodes[i].operands)
      phase[i] = std::max(phase[i], phase[static_cast<std::size_t>(m)]);
    if (candidate[i] && live[i]) {
      phase[i] += 1;
      any = true;
    }
    if (live[i])
      last = std::max(last, phase[i]);
  }
  for (int o : g.outputs)
    if (captured[static_cast<std::size_t>(o)])
      return; // an output that is a captured array: the one-plan path places it
  if (!any)
    return;
  // A node is exported by its segment when a later segment, a stage or the outputs use it.
  std::vector<char> exported(count, 0);
  for (int o : g.outputs)
    exported[static_cast<std::size_t>(o)] = 1;
  for (std::size_t i = 0; i < count; ++i)
    if (live[i])
      for (int m : g.nodes[i].operands)
        if (candidate[i] || phase[static_cast<std::size_t>(m)] < phase[i])
          exported[static_cast<std::size_t>(m)] = 1;
  auto materialized = [&](std::size_t i, int segment_phase) {
    return argument[i] || (candidate[i] && live[i]) || (exported[i] && phase[i] < segment_phase);
  };
  p.stages.assign(static_cast<std::size_t>(last) + 1, {});
  for (int k = 0; k <= last; ++k) {
    auto s = std::make_unique<segment>();
    for (std::size_t i = 0; i < count; ++i)
      if (live[i] && exported[i] && phase[i] == k && !argument[i] && !captured[i] && !candidate[i])
        s->wanted.push_back(static_cast<int>(i));
    std::vector<char> reached(count, 0);
    for (int w : s->wanted)
      reached[static_cast<std::size_t>(w)] = 1;
    for (std::size_t i = count; i-- > 0;) {
      if (!reached[i])
        continue;
      if (materialized(i, k)) {
        s->externals.push_back(static_cast<int>(i));
        continue;
      }
      for (int m : g.nodes[i].operands)
        reached[static_cast<std::size_t>(m)] = 1;
    }
    std::reverse(s->externals.begin(), s->externals.end());
    p.segments.push_back(std::move(s));
  }
  for (std::size_t i = 0; i < count; ++i)
    if (candidate[i] && live[i])
      p.stages[static_cast<std::size_t>(phase[i])].push_back(static_cast<int>(i));
  p.staged = true;
}

std::atomic<bool>& stages_enabled() {
  static std::atomic<bool> on{[] {
    const char* v = std::getenv("AM_PMAP_STAGES");
    return v == nullptr || std::string(v) != "0";
  }()};
  return on;
}

/// Whether stages can run this call here (else the one-plan path runs it).
bool can_stage(const staged_call& call) {
  if (!stages_enabled().load(std::memory_order_relaxed))
    return false;
  if (current_trace() != nullptr)
    return false;
  for (auto& a : call.global)
    if (a.is_tracer())
      return false;
  // A device driven through another process's link (a worker's, on a single-controller cluster's
  // controller) runs no stage: the plan's transfers serve it.
  auto context = current_context();
  for (auto& d : call.stacked->device_assignment())
    if (context->reach(d) == device_reach::through_link)
      return false;
  std::size_t cuda = 0, all = call.stacked->device_assignment().size();
  for (auto& d : call.stacked->device_assignment())
    cuda += d.platform == am::platform::cuda ? 1 : 0;
  if (cuda == 0)
    return true;
  // CUDA devices: NCCL stages where the build has them (stage_nccl.hpp), never a mix of platforms.
  return cuda == all && nccl_stages_enabled();
}

std::shared_ptr<staged_program> program_for(staged_cache& cache, const staged_call& call);

} // namespace

struct staged_cache {
  mutable std::mutex mutex;
  std::map<std::string, std::shared_ptr<staged_program>> programs; ///< at most staged_cache_bound
};

std::size_t staged_programs(const staged_cache& cache) {
  std::lock_guard<std::mutex> guard(cache.mutex);
  std::size_t n = 0;
  for (auto& [key, p] : cache.programs)
    n += p->staged ? 1 : 0;
  return n;
}

void set_stages_enabled(bool on) noexcept { stages_enabled().store(on); }

std::shared_ptr<staged_cache> make_staged_cache() { return std::make_shared<staged_cache>(); }

namespace {

std::shared_ptr<staged_program> program_for(staged_cache& cache, const staged_call& call) {
  auto key = signature_key(call.global);
  {
    std::lock_guard<std::mutex> guard(cache.mutex);
    auto it = cache.programs.find(key);
    if (it != cache.programs.end())
      return it->second;
  }
  auto p = std::make_shared<staged_program>();
  std::vector<array> slices;
  for (std::size_t k = 0; k < call.global.size(); ++k) {
    auto shape = call.global[k].shape();
    if (call.mapped[k])
      shape.erase(shape.begin());
    slices.push_back(abstract_array(shape, call.global[k].dtype(), call.replicated));
  }
  {
    axis_scope scope({call.axis_name, call.size, call.replicated});
    p->traced = trace_function(*call.f, slices, /*keep_effects=*/true);
  }
  if (!p->traced.effects.empty()) {
    // A debug print or callback: the one-plan path runs the call, and its effects on every call
    // (its collectives become shard transfers there: correct, without stages).
    std::lock_guard<std::mutex> guard(cache.mutex);
    if (cache.programs.size() >= staged_cache_bound && cache.programs.count(key) == 0)
      cache.programs.clear();
    return cache.programs.emplace(key, p).first->second;
  }
  std::set<int> processes;
  for (auto& d : call.stacked->device_assignment())
    processes.insert(d.process_index);
  p->across_processes = processes.size() > 1;
  analyse(*p, call.global.size(), call.axis_name);
  std::lock_guard<std::mutex> guard(cache.mutex);
  if (cache.programs.size() >= staged_cache_bound && cache.programs.count(key) == 0)
    cache.programs.clear(); // a function called with ever new signatures: keep the memory bounded
  return cache.programs.emplace(key, p).first->second;
}

/// True when `call` maps CUDA devices (can_stage: then all of them, and NCCL runs its stages).
bool on_cuda(const staged_call& call) {
  return call.stacked->device_assignment().front().platform == am::platform::cuda;
}

/// What every stage of `call` takes: the mapped devices and this process's parts of `operand`
/// (mapped: [B, slice...], one slice per device), in the mapped axis's order.
struct stage_inputs {
  std::vector<int> ids;       ///< the mapped devices' ids
  std::vector<int> owners;    ///< their processes
  std::vector<int> processes; ///< sorted, once each
  std::vector<shard_future> parts;
};

stage_inputs inputs_of(const array& operand, const staged_call& call) {
  stage_inputs in;
  std::set<int> processes;
  for (auto& d : call.stacked->device_assignment()) {
    processes.insert(d.process_index);
    in.ids.push_back(d.id);
    in.owners.push_back(d.process_index);
  }
  in.processes.assign(processes.begin(), processes.end());
  std::vector<std::pair<std::int64_t, shard_future>> local;
  for (auto& sh : *concrete_state(operand).shards())
    if (is_addressable(sh.device))
      local.emplace_back(sh.index.at(0).start, sh.data);
  std::sort(local.begin(), local.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [position, f] : local)
    in.parts.push_back(f);
  return in;
}

/// A stage's result of `shape` and `type` laid out by `layout`: a promise per local device in
/// `results` (for the stage to keep; with `positions`, each one's start along dim 0 there too),
/// the other processes' shards remote.
array stage_result(const shape_t& shape, am::dtype type, const sharding_ptr& layout,
                   std::vector<std::pair<int, promise<buffer_ref>>>& results, std::vector<int>* positions = nullptr) {
  std::vector<shard> out;
  for (auto& pl : layout->shard_placements(shape)) {
    shard_future data;
    if (is_addressable(pl.device)) {
      promise<buffer_ref> done;
      data = done.get_future();
      results.emplace_back(pl.device.id, std::move(done));
      if (positions)
        positions->push_back(static_cast<int>(pl.index.at(0).start));
    } else {
      data = remote_shard(pl.device);
    }
    out.push_back({pl.device, pl.index, pl.replica_id, std::move(data)});
  }
  auto s = std::make_shared<array_state>();
  s->shape = shape;
  s->type = type;
  s->layout = layout;
  s->set_shards(std::move(out));
  return array(std::move(s));
}

/// The NCCL form (stage_nccl.hpp) of `stage`, a stage of `call` over CUDA devices, whose results
/// each have `result_shape`: its parts and promises move over.
template <class Stage>
nccl_stage nccl_form(nccl_stage_kind kind, Stage& stage, const shape_t& result_shape, const staged_call& call) {
  nccl_stage out;
  out.kind = kind;
  out.type = stage.type;
  if constexpr (requires { stage.part_shape; })
    out.part_shape = stage.part_shape;
  else
    out.part_shape = stage.shape;
  out.result_shape = result_shape;
  out.mapped = call.stacked->device_assignment();
  out.processes = stage.processes;
  out.parts = std::move(stage.parts);
  out.results = std::move(stage.results);
  return out;
}

/// A reduction stage on `operand` (mapped: [B, slice...], one slice per device): its result on
/// every device, replicated, resolved when the stage ran.
array reduction(reduce_op op, const array& operand, const staged_call& call) {
  auto in = inputs_of(operand, call);
  shape_t slice(operand.shape().begin() + 1, operand.shape().end());
  reduction_stage stage;
  stage.op = op;
  stage.type = operand.dtype();
  stage.shape = slice;
  stage.total_parts = static_cast<int>(call.size);
  stage.devices = std::move(in.ids);
  stage.processes = std::move(in.processes);
  stage.parts = std::move(in.parts);
  auto result = stage_result(slice, operand.dtype(), call.replicated, stage.results);
  if (stage.results.empty())
    return result;
  if (on_cuda(call)) {
    auto on_gpus = nccl_form(nccl_stage_kind::all_reduce, stage, stage.shape, call);
    on_gpus.op = op;
    issue_nccl_stage(*current_context(), std::move(on_gpus));
  } else {
    issue_reduction(*current_context(), std::move(stage));
  }
  return result;
}

/// A gather stage of `operand`'s slices (mapped: [B, slice...]) whose results have `shape`.
gather_stage gather_of(const array& operand, const staged_call& call, shape_t shape) {
  auto in = inputs_of(operand, call);
  gather_stage stage;
  stage.type = operand.dtype();
  stage.part_shape = shape_t(operand.shape().begin() + 1, operand.shape().end());
  stage.shape = std::move(shape);
  stage.devices = std::move(in.ids);
  stage.owners = std::move(in.owners);
  stage.processes = std::move(in.processes);
  stage.parts = std::move(in.parts);
  return stage;
}

/// An all_gather stage on `operand` (mapped: [B, slice...]) for node `n`: the slices one after
/// another on every device, replicated ([B, slice...], which is also the tiled gather along axis
/// 0), then moved to the gather's axis and tiled there as the one-plan path does.
array gathered(const node& n, const array& operand, const staged_call& call) {
  auto& c = collective_of(n);
  auto stage = gather_of(operand, call, c.axis == 0 ? n.shape : operand.shape());
  auto result = stage_result(stage.shape, operand.dtype(), call.replicated, stage.results);
  if (!stage.results.empty() && on_cuda(call))
    issue_nccl_stage(*current_context(), nccl_form(nccl_stage_kind::all_gather, stage, stage.shape, call));
  else if (!stage.results.empty())
    issue_gather(*current_context(), std::move(stage));
  if (c.axis == 0)
    return result;
  auto moved = moveaxis(result, 0, c.axis);
  return c.tiled ? reshape(moved, n.shape) : moved;
}

/// A psum_scatter stage on `operand` (mapped: [B, slice...]) for node `n`: each device's block of
/// the sum ([B, n.shape...], mapped), resolved when the stage ran. The stage splits the parts'
/// first dimension, so a scatter along another dimension d moves dim d + 1 to 1 first (each
/// device transposes its slice) and, tiled, its block back after, as the one-plan path does.
array scattered(const node& n, const array& operand, const staged_call& call) {
  auto& c = collective_of(n);
  auto d = c.axis + 1;
  auto moved = moveaxis(operand, d, 1);
  auto front = broadcast_to(moved, moved.shape(), call.stacked); // [B, S[d], rest...]
  auto in = inputs_of(front, call);
  scatter_stage stage;
  stage.type = operand.dtype();
  stage.part_shape = shape_t(front.shape().begin() + 1, front.shape().end());
  stage.block_shape = front.shape();
  stage.block_shape[0] = 1;                      // a device's shard: [1, S[d] / B, rest...] tiled,
  if (c.tiled)                                   // [1, rest...] not
    stage.block_shape[1] /= call.size;
  else
    stage.block_shape.erase(stage.block_shape.begin() + 1);
  stage.devices = std::move(in.ids);
  stage.owners = std::move(in.owners);
  stage.processes = std::move(in.processes);
  stage.parts = std::move(in.parts);
  auto shape = stage.block_shape;
  shape[0] = call.size;
  auto result = stage_result(shape, operand.dtype(), call.stacked, stage.results, &stage.positions);
  if (!stage.results.empty() && on_cuda(call))
    issue_nccl_stage(*current_context(), nccl_form(nccl_stage_kind::reduce_scatter, stage, stage.block_shape, call));
  else if (!stage.results.empty())
    issue_scatter(*current_context(), std::move(stage));
  if (!c.tiled || d == 1)
    return result;
  auto back = moveaxis(result, 1, d);
  return broadcast_to(back, back.shape(), call.stacked); // [B, n.shape...]
}

/// A ppermute stage on `operand` (mapped: [B, slice...]) for node `n`: each device's result is the
/// slice of its source in the permutation, or zeros ([B, slice...], mapped), resolved when the
/// stage ran.
array permuted(const node& n, const array& operand, const staged_call& call) {
  auto in = inputs_of(operand, call);
  permute_stage stage;
  stage.type = operand.dtype();
  stage.part_shape = shape_t(operand.shape().begin() + 1, operand.shape().end());
  stage.shard_shape = operand.shape();
  stage.shard_shape[0] = 1; // a device's shard of the mapped result
  stage.devices = std::move(in.ids);
  stage.owners = std::move(in.owners);
  stage.processes = std::move(in.processes);
  stage.parts = std::move(in.parts);
  stage.sources.assign(static_cast<std::size_t>(call.size), -1);
  for (auto [from, to] : collective_of(n).perm)
    stage.sources.at(static_cast<std::size_t>(to)) = from;
  auto result = stage_result(operand.shape(), operand.dtype(), call.stacked, stage.results, &stage.positions);
  if (!stage.results.empty() && on_cuda(call)) {
    auto on_gpus = nccl_form(nccl_stage_kind::permute, stage, stage.shard_shape, call);
    on_gpus.pairs = collective_of(n).perm;
    issue_nccl_stage(*current_context(), std::move(on_gpus));
  } else if (!stage.results.empty()) {
    issue_permute(*current_context(), std::move(stage));
  }
  return result;
}

/// Runs segment `s` on the values it takes; records the values it exports.
void run_segment(segment& s, const staged_program& p, std::map<int, batched>& values, const staged_call& call,
                 const batch_axis& axis) {
  std::vector<array> inputs;
  std::vector<char> mapped;
  for (int e : s.externals) {
    auto& v = values.at(e);
    inputs.push_back(v.value);
    mapped.push_back(v.mapped ? 1 : 0);
  }
  auto body = [&](const std::vector<array>& tracers) {
    std::vector<std::pair<int, batched>> known;
    for (std::size_t k = 0; k < tracers.size(); ++k)
      known.emplace_back(s.externals[k], batched{tracers[k], mapped[k] != 0});
    auto outs = batch_nodes(p.traced, known, s.wanted, axis);
    std::vector<array> result;
    std::vector<char> flags;
    for (auto& o : outs) {
      result.push_back(broadcast_to(o.value, o.value.shape(), o.mapped ? call.stacked : call.replicated));
      flags.push_back(o.mapped ? 1 : 0);
    }
    std::lock_guard<std::mutex> guard(s.mutex);
    s.mapped = flags;
    return result;
  };
  auto outs = s.plans.call(inputs, body);
  std::vector<char> flags;
  {
    std::lock_guard<std::mutex> guard(s.mutex);
    flags = s.mapped;
  }
  for (std::size_t k = 0; k < s.wanted.size(); ++k)
    values[s.wanted[k]] = batched{outs.at(k), flags.at(k) != 0};
}

} // namespace

std::optional<std::vector<array>> run_staged(staged_cache& cache, const staged_call& call) {
  if (!can_stage(call))
    return std::nullopt;
  auto p = program_for(cache, call);
  if (!p->staged)
    return std::nullopt;
  auto& g = p->traced.g;
  std::map<int, batched> values;
  for (std::size_t k = 0; k < call.global.size(); ++k)
    values[g.inputs.at(k)] = batched{call.global[k], call.mapped[k]};
  for (std::size_t k = call.global.size(); k < g.inputs.size(); ++k) // arrays the function captured
    values[g.inputs[k]] = batched{p->traced.captured.at(k - call.global.size()), false};
  batch_axis axis{call.axis_name, call.size, call.stacked, call.stacked};
  for (std::size_t k = 0; k < p->segments.size(); ++k) {
    for (int c : p->stages[k]) {
      auto& n = g.nodes[static_cast<std::size_t>(c)];
      auto& operand = values.at(n.operands.at(0));
      auto kind = *stage_of(n, call.axis_name, *p);
      if (operand.mapped && kind.gather)
        values[c] = batched{gathered(n, operand.value, call), false};
      else if (operand.mapped && kind.permute)
        values[c] = batched{permuted(n, operand.value, call), true};
      else if (operand.mapped && kind.scatter)
        values[c] = batched{scattered(n, operand.value, call), true};
      else if (operand.mapped)
        values[c] = batched{reduction(kind.op, operand.value, call), false};
      else
        values[c] = batch_collective(n, {operand}, axis); // the same on every device: no communication
    }
    if (!p->segments[k]->wanted.empty())
      run_segment(*p->segments[k], *p, values, call, axis);
  }
  auto out_axes = match_axes(call.out_axes, g.outputs.size(), "pmap", "out_axes");
  std::vector<array> result;
  for (std::size_t k = 0; k < g.outputs.size(); ++k)
    result.push_back(place_output(values.at(g.outputs[k]), out_axes[k], axis, "pmap"));
  return result;
}

} // namespace am::detail
