#include "devices/collectives/stage_group.hpp"

#include "actors/detail/fnv1a.hpp"
#include "actors/detail/log.hpp"

#include <mutex>

namespace am::detail {

namespace {

/// The runtime's stage groups, by device list.
struct stage_groups {
  std::mutex mutex;
  std::map<std::vector<int>, std::unique_ptr<stage_group>> groups;

  /// Waits (until `deadline`) for the stages issued so far: other processes may still need this
  /// one's part of them after it stopped wanting their results (runtime_impl::add_stop_drain).
  void drain(std::chrono::steady_clock::time_point deadline) {
    std::vector<stage_group*> all;
    {
      std::lock_guard<std::mutex> guard(mutex);
      for (auto& [devices, g] : groups)
        all.push_back(g.get());
    }
    for (auto* g : all)
      if (!g->worker.wait_idle(deadline))
        log(log_level::warning, "stopping with pmap stages of '{}' still running (the shutdown timeout passed)", g->name);
  }
};

/// The runtime's pmap stage groups.
const service_key<stage_groups> stage_groups_key{"pmap stages"};

} // namespace

stage_group& group_for(runtime_context& context, const std::vector<int>& devices, const std::vector<int>& processes) {
  auto& rt = impl_of(context);
  auto svc = rt.service(stage_groups_key, [&rt] {
    auto made = std::make_shared<stage_groups>();
    // The service goes only after the drains ran (runtime_impl::stop), so the pointer stays good.
    rt.add_stop_drain([groups = made.get()](std::chrono::steady_clock::time_point deadline) { groups->drain(deadline); });
    return made;
  });
  std::lock_guard<std::mutex> guard(svc->mutex);
  auto& g = svc->groups[devices];
  if (!g)
    g = std::make_unique<stage_group>(rt, devices, processes);
  return *g;
}

std::string stage_group::name_of(const std::vector<int>& devices) {
  fnv1a64 h;
  for (int d : devices)
    h.add_u32(static_cast<std::uint32_t>(d));
  return "am.pmap." + std::to_string(devices.size()) + "." + h.hex();
}

host_parts wait_for_parts(const std::vector<shard_future>& parts, const char* what) {
  host_parts out;
  for (auto& f : parts) {
    out.buffers.push_back(f.get());
    if (!out.buffers.back()->host_accessible())
      throw runtime_error(std::string("internal: ") + what + " got a part outside host memory");
    out.data.push_back(out.buffers.back()->data());
  }
  return out;
}

void across_processes(stage_group& g, const std::function<void(communicator&)>& op) {
  if (g.failure)
    std::rethrow_exception(g.failure);
  try {
    if (!g.comm)
      g.comm = std::make_unique<communicator>(g.rt.cluster(), g.processes, g.name, g.rt.data_plane_address(),
                                              g.rt.config().collective_timeout);
    op(*g.comm);
  } catch (...) {
    g.failure = std::current_exception();
    throw;
  }
}

} // namespace am::detail
