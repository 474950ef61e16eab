#include "devices/detail/actor_endpoint.hpp"

#include "actormesh/actors/lane.hpp"
#include "devices/detail/runtime_impl.hpp"
#include "observability/stats_counters.hpp"
#include "observability/trace_hooks.hpp"

#include <caf/send.hpp>

#include <unordered_map>
#include <utility>

namespace am::detail {

namespace {

/// This thread's outbox to the device behind `ep`, created (and registered with the runtime, which
/// closes it when it stops) on first use.
const std::shared_ptr<device_outbox>& outbox_for(runtime_impl& rt, const actor_endpoint& ep) {
  thread_local std::unordered_map<std::uint64_t, std::shared_ptr<device_outbox>> outboxes;
  auto it = outboxes.find(ep.lane_key);
  if (it != outboxes.end())
    return it->second;
  if (outboxes.size() >= 64) // forget outboxes of runtimes that have stopped
    std::erase_if(outboxes, [](auto& entry) { return entry.second->closed(); });
  auto box = std::make_shared<device_outbox>(this_caller());
  rt.register_outbox(box);
  return outboxes.emplace(ep.lane_key, std::move(box)).first->second;
}

} // namespace

void actor_endpoint::send_in_lane(runtime_impl& rt, const std::shared_ptr<device_outbox>& box,
                                  device_work work) const {
  runtime_impl::call_guard issuing(rt); // stop() waits for this call to be queued or refused
  if (auto* counters = stats::device(dev.id))
    counters->queued.fetch_add(1, std::memory_order_relaxed);
  auto dispatch = observability::device_dispatch_span(work); // the caller's end of the call's arrow
  call_header queued_as{}; // caller 0: not queued (no caller has id 0)
  if (box->push(std::move(work), dispatch.active() ? &queued_as : nullptr)) {
    observability::trace_send(dev); // a take message: the lane's message to the device
    caf::anon_send(actor, device_batch{box});
  }
  if (queued_as.caller != 0)
    observability::starts_flow(dispatch, dev, queued_as);
}

std::vector<shard_future> actor_endpoint::execute(runtime_impl& rt, std::shared_ptr<const program> code,
                                                  std::vector<shard_future> inputs) const {
  program_call call{std::move(code), std::move(inputs), {}};
  std::vector<shard_future> results;
  call.outputs.resize(call.code->outputs.size());
  results.reserve(call.outputs.size());
  for (auto& out : call.outputs)
    results.push_back(out.get_future());
  send_in_lane(rt, outbox_for(rt, *this), std::move(call));
  return results;
}

shard_future actor_endpoint::upload(runtime_impl& rt, std::vector<std::byte> bytes, value_type type) const {
  promise<buffer_ref> out;
  auto result = out.get_future();
  auto shared = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
  send_in_lane(rt, outbox_for(rt, *this), upload_call{std::move(shared), std::move(type), std::move(out), {}});
  return result;
}

shard_future actor_endpoint::upload_written(runtime_impl& rt, value_type type, buffer_writer write) const {
  promise<buffer_ref> out;
  auto result = out.get_future();
  send_in_lane(rt, outbox_for(rt, *this), upload_call{nullptr, std::move(type), std::move(out), std::move(write)});
  return result;
}

future<std::vector<std::byte>> actor_endpoint::fetch(runtime_impl& rt, shard_future shard) const {
  promise<std::vector<std::byte>> out;
  auto result = out.get_future();
  send_in_lane(rt, outbox_for(rt, *this), fetch_call{std::move(shard), std::move(out)});
  return result;
}

} // namespace am::detail
