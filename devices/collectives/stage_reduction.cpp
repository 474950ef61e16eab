#include "devices/collectives/stage_reduction.hpp"

#include "actormesh/build_config.hpp"
#include "actors/errors.hpp"
#include "devices/collectives/communicator.hpp"
#include "devices/collectives/reduce_kernels.hpp"
#include "devices/collectives/serial_worker.hpp"
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

/// The stages of one list of mapped devices: their worker and, across processes, their
/// communicator (created by the worker at the group's first stage; creation is collective, and
/// every process reaches its first stage of the group at the same point of the program).
struct stage_group {
  stage_group(runtime_impl& r, const std::vector<int>& devices, std::vector<int> p)
    : rt(r), name(name_of(devices)), processes(std::move(p)), worker("am-pmap-stage") {}

  /// The communicator's name: the same in every process for the same device list, at most 200
  /// characters however many devices (FNV-1a of the ids, and their count).
  static std::string name_of(const std::vector<int>& devices) {
    std::uint64_t h = 14695981039346656037ull;
    for (int d : devices)
      for (int k = 0; k < 4; ++k) {
        h ^= (static_cast<std::uint32_t>(d) >> (8 * k)) & 0xffu;
        h *= 1099511628211ull;
      }
    char text[64];
    std::snprintf(text, sizeof text, "am.pmap.%zu.%016llx", devices.size(), static_cast<unsigned long long>(h));
    return text;
  }

  runtime_impl& rt;
  std::string name;
  std::vector<int> processes;
  std::unique_ptr<communicator> comm; ///< only touched on the worker
  std::exception_ptr failure;         ///< the first failure across processes (worker only)
#if AM_HAVE_CUDA && AM_HAVE_NCCL
  std::unique_ptr<nccl_communicator> nccl;                  ///< CUDA devices' stages (worker only)
  std::map<int, std::shared_ptr<cuda::device_stream>> streams;    ///< the stage's stream per device id
#endif
  serial_worker worker;               ///< last: joined first, while the rest is alive
};

/// The runtime's stage groups, by device list.
struct stage_groups {
  std::mutex mutex;
  std::map<std::vector<int>, std::unique_ptr<stage_group>> groups;
};

stage_group& group_for(runtime_impl& rt, const std::vector<int>& devices, const std::vector<int>& processes) {
  auto svc = std::static_pointer_cast<stage_groups>(
    rt.service("pmap_stages", [] { return std::make_shared<stage_groups>(); }));
  std::lock_guard<std::mutex> guard(svc->mutex);
  auto& g = svc->groups[devices];
  if (!g)
    g = std::make_unique<stage_group>(rt, devices, processes);
  return *g;
}

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
  std::vector<buffer_ref> parts;
  std::vector<const void*> data;
  for (auto& f : s.parts) {
    parts.push_back(f.get());
    if (!parts.back()->host_accessible())
      throw runtime_error("internal: a reduction stage got a part outside host memory");
    data.push_back(parts.back()->data());
  }
  if (s.results.empty())
    throw runtime_error("internal: a reduction stage without a local device");
  auto pool = g.rt.cpu_pool(s.results.front().first);
  if (!pool)
    throw runtime_error("internal: a reduction stage on a device without a host pool");
  auto out = make_cpu_buffer(s.type, s.shape, pool);
  combine_parts(s.type, s.op, data, count, out->data());
  parts.clear(); // the parts' memory goes back before the wait across processes
  if (g.processes.size() > 1) {
    // The first failure across processes is every later stage's error too (the communicator is
    // broken by it; its own later refusals would hide what happened).
    if (g.failure)
      std::rethrow_exception(g.failure);
    try {
      if (!g.comm)
        g.comm = std::make_unique<communicator>(g.rt.cluster(), g.processes, g.name, g.rt.data_plane_address(),
                                                g.rt.config().collective_timeout);
      g.comm->all_reduce(out->data(), out->data(), count, s.type, s.op == reduce_op::mean ? reduce_op::sum : s.op);
    } catch (...) {
      g.failure = std::current_exception();
      throw;
    }
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
  g.worker.post([&g, s = std::make_shared<reduction_stage>(std::move(stage))] {
    try {
      run_stage(g, *s);
    } catch (...) {
      for (auto& r : s->results)
        r.second.set_error(std::current_exception());
    }
  });
}

} // namespace am::detail
