#include "devices/collectives/stage_reduction.hpp"

#include "actormesh/build_config.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/collectives/communicator.hpp"
#include "devices/collectives/reduce_kernels.hpp"
#include "devices/collectives/stage_group.hpp"
#include "devices/collectives/shared_view.hpp"
#include "devices/cpu/cpu_buffer.hpp"
#include "devices/detail/runtime_impl.hpp"

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

void run_stage(stage_group& g, reduction_stage& s) {
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

void issue_reduction(runtime_context& rt, reduction_stage stage) {
  check_reducible(stage.type, stage.op);
  auto& g = group_for(rt, stage.devices, stage.processes);
  post_stage(g, std::move(stage), run_stage);
}

} // namespace am::detail
