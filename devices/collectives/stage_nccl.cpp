#include "devices/collectives/stage_nccl.hpp"

#include "actormesh/build_config.hpp"
#include "actormesh/actors/errors.hpp"
#include "devices/collectives/reduce_kernels.hpp"
#include "devices/collectives/stage_group.hpp"
#include "devices/detail/runtime_impl.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace am::detail {

namespace {

#if AM_HAVE_CUDA && AM_HAVE_NCCL

/// The element count an operation of `s` takes per rank.
std::size_t count_of(const nccl_stage& s) {
  return static_cast<std::size_t>(element_count(s.part_shape));
}

void run_nccl_stage(stage_group& g, nccl_stage& s) {
  if (g.failure)
    std::rethrow_exception(g.failure);
  std::vector<buffer_ref> parts; // in the mapped axis's order, which is the local ranks' order
  for (auto& f : s.parts)
    parts.push_back(f.get());
  try {
    if (!g.nccl)
      g.nccl = std::make_unique<nccl_communicator>(g.rt.cluster(), s.mapped, g.name + ".nccl",
                                                   g.rt.config().collective_timeout, g.rt.data_plane_address());
    auto& ranks = g.nccl->local_ranks();
    if (ranks.size() != parts.size())
      throw runtime_error("internal: an NCCL stage with " + std::to_string(parts.size()) + " parts for "
                          + std::to_string(ranks.size()) + " local ranks");
    std::vector<nccl_buffers> local;
    std::vector<std::pair<int, buffer_ref>> outs;
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      auto& dev = s.mapped.at(static_cast<std::size_t>(ranks[k]));
      if (parts[k]->device_id() != dev.id || cuda::cuda_ordinal_of(*parts[k]) < 0)
        throw runtime_error("internal: an NCCL stage's part for " + to_string(dev) + " is not in its memory");
      auto& stream = g.streams[dev.id];
      if (!stream)
        stream = std::make_shared<cuda::device_stream>(dev);
      auto out = std::make_shared<cuda::cuda_buffer>(s.type, s.result_shape, stream);
      local.push_back({parts[k]->data(), out->data(), stream->handle()});
      outs.emplace_back(dev.id, out);
    }
    auto count = count_of(s);
    switch (s.kind) {
      case nccl_stage_kind::all_reduce: g.nccl->all_reduce(local, count, s.type, s.op); break;
      case nccl_stage_kind::all_gather: g.nccl->all_gather(local, count, s.type); break;
      case nccl_stage_kind::reduce_scatter: g.nccl->reduce_scatter(local, count, s.type, reduce_op::sum); break;
      case nccl_stage_kind::permute: g.nccl->permute(local, count, s.type, s.pairs); break;
    }
    for (auto& [device_id, done] : s.results)
      for (auto& [id, out] : outs)
        if (id == device_id)
          done.set_value(out);
  } catch (...) {
    g.failure = std::current_exception();
    throw;
  }
}

#else

void run_nccl_stage(stage_group&, nccl_stage&) {
  throw runtime_error("internal: a stage on CUDA devices in a build without NCCL");
}

#endif

} // namespace

bool nccl_stages_enabled() noexcept {
#if AM_HAVE_CUDA && AM_HAVE_NCCL
  static const bool on = [] {
    const char* v = std::getenv("AM_PMAP_NCCL_STAGES");
    return (v == nullptr || std::string(v) != "0") && nccl_available();
  }();
  return on;
#else
  return false;
#endif
}

void issue_nccl_stage(runtime_context& rt, nccl_stage stage) {
  if (stage.kind == nccl_stage_kind::all_reduce || stage.kind == nccl_stage_kind::reduce_scatter)
    check_reducible(stage.type, stage.kind == nccl_stage_kind::all_reduce ? stage.op : reduce_op::sum);
  std::vector<int> ids;
  for (auto& d : stage.mapped)
    ids.push_back(d.id);
  auto& g = group_for(rt, ids, stage.processes);
  post_stage(g, std::move(stage), run_nccl_stage);
}

} // namespace am::detail
