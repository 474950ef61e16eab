#include "devices/collectives/stage_reduction.hpp"

#include "actormesh/build_config.hpp"
#include "actors/errors.hpp"
#include "devices/collectives/communicator.hpp"
#include "devices/collectives/reduce_kernels.hpp"
#include "devices/collectives/stage_group.hpp"
#include "devices/collectives/shared_view.hpp"
#include "devices/cpu/cpu_buffer.hpp"
#include "devices/detail/runtime_impl.hpp"
#if AM_HAVE_CUDA && AM_HAVE_NCCL
#include "devices/collectives/nccl_communicator.hpp"
#include "devices/cuda/cuda_buffer.hpp"
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace am::detail {

namespace {

/// A stage on CUDA devices: one NCCL all-reduce over every mapped device (see the header).
void run_nccl_stage(stage_group& g, reduction_stage& s) {
#if AM_HAVE_CUDA && AM_HAVE_NCCL
  if (g.failure)
    std::rethrow_exception(g.failure);
  auto count = static_cast<std::size_t>(element_count(s.shape));
  std::vector<buffer_ref> parts; // in the mapped axis's order, which is the local ranks' order
  for (auto& f : s.parts)
    parts.push_back(f.get());
  try {
    if (!g.nccl)
      g.nccl = std::make_unique<nccl_communicator>(g.rt.cluster(), s.mapped, g.name + ".nccl",
                                                   g.rt.config().collective_timeout);
    auto& ranks = g.nccl->local_ranks();
    if (ranks.size() != parts.size())
      throw runtime_error("internal: an NCCL stage with " + std::to_string(parts.size()) + " parts for "
                          + std::to_string(ranks.size()) + " local ranks");
    std::vector<nccl_buffers> local;
    std::vector<std::pair<int, buffer_ref>> outs;
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      auto& dev = s.mapped.at(static_cast<std::size_t>(ranks[k]));
      auto& stream = g.streams[dev.id];
      if (!stream)
        stream = std::make_shared<cuda::device_stream>(dev);
      auto out = std::make_shared<cuda::cuda_buffer>(s.type, s.shape, stream);
      local.push_back({parts[k]->data(), out->data(), stream->handle()});
      outs.emplace_back(dev.id, out);
    }
    g.nccl->all_reduce(local, count, s.type, s.op);
    for (auto& [device_id, done] : s.results)
      for (auto& [id, out] : outs)
        if (id == device_id)
          done.set_value(out);
  } catch (...) {
    g.failure = std::current_exception();
    throw;
  }
#else
  (void)g;
  (void)s;
  throw runtime_error("internal: a stage on CUDA devices in a build without NCCL");
#endif
}

void run_stage(stage_group& g, reduction_stage& s) {
  if (s.on_cuda) {
    run_nccl_stage(g, s);
    return;
  }
  auto count = static_cast<std::size_t>(element_count(s.shape));
  auto parts = wait_for_parts(s.parts, "a reduction stage");
  auto out = make_cpu_buffer(s.type, s.shape, result_pool(g, s.results, "a reduction stage"));
  combine_parts(s.type, s.op, parts.data, count, out->data());
  parts = {}; // the parts' memory goes back before the wait across processes
  if (g.processes.size() > 1) {
    across_processes(g, [&](communicator& comm) {
      comm.all_reduce(out->data(), out->data(), count, s.type, s.op == reduce_op::mean ? reduce_op::sum : s.op);
    });
  }
  if (s.op == reduce_op::mean)
    divide_in_place(s.type, out->data(), count, s.total_parts);
  for (auto& [device_id, done] : s.results)
    done.set_value(share_with(out, s.shape, device_id));
}

} // namespace

bool nccl_stages_enabled() noexcept {
#if AM_HAVE_CUDA && AM_HAVE_NCCL
  static const bool on = [] {
    const char* v = std::getenv("AM_PMAP_NCCL_STAGES");
    return v != nullptr && std::string(v) == "1" && nccl_available();
  }();
  return on;
#else
  return false;
#endif
}

bool stage_reduces(am::dtype type, reduce_op) noexcept {
  return type == am::dtype::float32 || type == am::dtype::float64;
}

void combine_parts(am::dtype type, reduce_op op, const std::vector<const void*>& parts, std::size_t count, void* out) {
  if (parts.empty())
    throw runtime_error("internal: combine_parts without parts");
  auto size = size_of(type);
  auto* dst = static_cast<std::byte*>(out);
  if (parts.size() == 1) {
    std::memcpy(dst, parts[0], count * size);
    return;
  }
  auto kernel = kernel_for(type, op == reduce_op::mean ? reduce_op::sum : op);
  // Tiles of 32 KiB: the partial result stays in the core's cache while every part streams past.
  const std::size_t tile = std::max<std::size_t>(1, (32u << 10) / size);
  for (std::size_t start = 0; start < count; start += tile) {
    auto n = std::min(tile, count - start);
    auto at = [&](std::size_t p) { return static_cast<const std::byte*>(parts[p]) + start * size; };
    kernel(dst + start * size, at(0), at(1), n);
    for (std::size_t p = 2; p < parts.size(); ++p)
      kernel(dst + start * size, dst + start * size, at(p), n);
  }
}

void issue_reduction(runtime_impl& rt, reduction_stage stage) {
  check_reducible(stage.type, stage.op);
  auto& g = group_for(rt, stage.devices, stage.processes);
  post_stage(g, std::move(stage), run_stage);
}

} // namespace am::detail
