#include "devices/calls.hpp"

#include "actors/lane.hpp"
#include "actors/detail/messages.hpp"
#include "devices/detail/runtime_impl.hpp"

#include <caf/send.hpp>

#include <unordered_map>

namespace am {

namespace {

/// This thread's outbox to the device behind `ep`, created (and registered with the runtime, which
/// closes it when it stops) on first use.
const std::shared_ptr<detail::device_outbox>& outbox_for(detail::runtime_impl& rt,
                                                        const detail::device_endpoint& ep) {
  thread_local std::unordered_map<std::uint64_t, std::shared_ptr<detail::device_outbox>> outboxes;
  auto it = outboxes.find(ep.lane_key);
  if (it != outboxes.end())
    return it->second;
  if (outboxes.size() >= 64) // forget outboxes of runtimes that have stopped
    std::erase_if(outboxes, [](auto& entry) { return entry.second->closed(); });
  auto box = std::make_shared<detail::device_outbox>(this_caller());
  rt.register_outbox(box);
  return outboxes.emplace(ep.lane_key, std::move(box)).first->second;
}

/// Queues a piece of work as the next call of this thread's lane to the device (the outbox numbers
/// it); sends the device a take message unless one is already pending.
void send_to_device(const device& d, detail::device_work work) {
  auto rt = detail::current_runtime();
  detail::runtime_impl::call_guard issuing(*rt); // stop() waits for this call to be queued or refused
  auto& ep = rt->endpoint(d);
  auto& box = outbox_for(*rt, ep);
  if (box->push(std::move(work)))
    caf::anon_send(ep.actor, detail::device_batch{box});
}

} // namespace

std::vector<shard_future> execute(const device& d, std::shared_ptr<const program> p,
                                  std::vector<shard_future> inputs) {
  if (!p)
    throw value_error("execute: no program");
  detail::program_call call{std::move(p), std::move(inputs), {}};
  std::vector<shard_future> results;
  call.outputs.resize(call.code->outputs.size());
  results.reserve(call.outputs.size());
  for (auto& out : call.outputs)
    results.push_back(out.get_future());
  send_to_device(d, std::move(call));
  return results;
}

shard_future upload(const device& d, std::vector<std::byte> bytes, value_type type) {
  promise<buffer_ref> out;
  auto result = out.get_future();
  auto shared = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
  send_to_device(d, detail::upload_call{std::move(shared), std::move(type), std::move(out)});
  return result;
}

future<std::vector<std::byte>> fetch(const device& d, shard_future shard) {
  promise<std::vector<std::byte>> out;
  auto result = out.get_future();
  send_to_device(d, detail::fetch_call{std::move(shard), std::move(out)});
  return result;
}

namespace detail {

void submit_host_task(std::function<void()> task) {
  auto rt = current_runtime();
  runtime_impl::call_guard issuing(*rt);
  caf::anon_send(rt->host(), host_call{next_call_header(rt->host_lane_key()), std::move(task)});
}

} // namespace detail

} // namespace am
