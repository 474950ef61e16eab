#include "devices/calls.hpp"

#include "actors/errors.hpp"
#include "actors/lane.hpp"
#include "actors/detail/messages.hpp"
#include "devices/detail/lane_calls.hpp"
#include "devices/detail/runtime_impl.hpp"
#include "devices/remote/controller_link.hpp"
#include "observability/trace_hooks.hpp"
#include "observability/stats_counters.hpp"

#include <caf/send.hpp>

#include <chrono>
#include <unordered_map>
#include <utility>
#include <vector>

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

/// Queues a piece of work as the next call of this thread's lane to the device actor behind `ep`
/// (the outbox numbers it); sends the device a take message unless one is already pending.
void send_to_device(detail::runtime_impl& rt, const detail::device_endpoint& ep, detail::device_work work) {
  detail::send_in_lane(rt, ep, outbox_for(rt, ep), std::move(work));
}

} // namespace

namespace detail {

void send_in_lane(runtime_impl& rt, const device_endpoint& ep, const std::shared_ptr<device_outbox>& box,
                  device_work work) {
  runtime_impl::call_guard issuing(rt); // stop() waits for this call to be queued or refused
  if (auto* counters = stats::device(ep.dev.id))
    counters->queued.fetch_add(1, std::memory_order_relaxed);
  if (box->push(std::move(work))) {
    observability::trace_send(ep.dev); // a take message: the lane's message to the device
    caf::anon_send(ep.actor, device_batch{box});
  }
}

} // namespace detail

std::vector<shard_future> execute(const device& d, std::shared_ptr<const program> p,
                                  std::vector<shard_future> inputs) {
  if (!p)
    throw value_error("execute: no program");
  auto rt = detail::current_runtime();
  auto& ep = rt->route(d);
  if (ep.link) { // a worker's device: the link is used under a call_guard, never once the runtime stops
    detail::runtime_impl::call_guard issuing(*rt);
    return ep.link->execute(d, std::move(p), inputs);
  }
  detail::program_call call{std::move(p), std::move(inputs), {}};
  std::vector<shard_future> results;
  call.outputs.resize(call.code->outputs.size());
  results.reserve(call.outputs.size());
  for (auto& out : call.outputs)
    results.push_back(out.get_future());
  send_to_device(*rt, ep, std::move(call));
  return results;
}

shard_future upload(const device& d, std::vector<std::byte> bytes, value_type type) {
  auto rt = detail::current_runtime();
  auto& ep = rt->route(d);
  if (ep.link) {
    detail::runtime_impl::call_guard issuing(*rt);
    return ep.link->upload(d, std::move(bytes), std::move(type));
  }
  promise<buffer_ref> out;
  auto result = out.get_future();
  auto shared = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
  send_to_device(*rt, ep, detail::upload_call{std::move(shared), std::move(type), std::move(out), {}});
  return result;
}

shard_future upload_written(const device& d, value_type type, buffer_writer write) {
  if (!write)
    throw value_error("upload_written: no writer");
  auto rt = detail::current_runtime();
  auto& ep = rt->route(d);
  if (ep.link) {
    // The bytes travel to the worker: written here, into the message's own block.
    std::vector<std::byte> bytes(static_cast<std::size_t>(element_count(type.shape))
                                 * static_cast<std::size_t>(size_of(type.dtype)));
    write(bytes.data(), bytes.size());
    detail::runtime_impl::call_guard issuing(*rt);
    return ep.link->upload(d, std::move(bytes), std::move(type));
  }
  promise<buffer_ref> out;
  auto result = out.get_future();
  send_to_device(*rt, ep, detail::upload_call{nullptr, std::move(type), std::move(out), std::move(write)});
  return result;
}

future<std::vector<std::byte>> fetch(const device& d, shard_future shard) {
  auto rt = detail::current_runtime();
  auto& ep = rt->route(d);
  if (ep.link) {
    detail::runtime_impl::call_guard issuing(*rt);
    return ep.link->fetch(d, shard);
  }
  promise<std::vector<std::byte>> out;
  auto result = out.get_future();
  send_to_device(*rt, ep, detail::fetch_call{std::move(shard), std::move(out)});
  return result;
}

namespace detail {

namespace {

/// This thread's lane worker on the host actor of `rt`, asked for once per thread and runtime
/// (held weakly: the worker goes when the runtime stops). Null once the runtime has stopped.
/// One thread's lane workers, by runtime; when the thread ends, each runtime still running is told
/// to retire the thread's lane (its worker stops after the tasks it has), so threads that come and
/// go leave no lane threads behind.
struct thread_lanes {
  struct entry {
    std::uint64_t key;     ///< the runtime's host_lane_key
    caf::actor_addr lane;  ///< the lane worker
    caf::actor_addr host;  ///< the runtime's host actor
    std::shared_ptr<stats::lane_counters> counters; ///< the lane's, for am::runtime_stats()
  };
  caller_id caller = 0;
  std::vector<entry> entries;

  ~thread_lanes() {
    for (auto& e : entries)
      if (auto host = caf::actor_cast<caf::actor>(e.host))
        caf::anon_send(host, host_lane_retire{caller});
  }
};

/// This thread's lane worker on the host actor of `rt` and its counters.
std::pair<caf::actor, stats::lane_counters*> host_lane_of_this_thread(runtime_impl& rt) {
  thread_local thread_lanes mine;
  for (auto& e : mine.entries)
    if (e.key == rt.host_lane_key())
      return {caf::actor_cast<caf::actor>(e.lane), e.counters.get()};
  mine.caller = this_caller();
  auto& lanes = mine.entries;
  promise<caf::actor> asked;
  auto answer = asked.get_future();
  caf::actor_addr host;
  {
    runtime_impl::call_guard issuing(rt); // stop() clears the host handle once no guard is held
    host = rt.host().address();
    caf::anon_send(rt.host(), host_lane_request{this_caller(), std::move(asked)});
  }
  auto lane = answer.get(std::chrono::seconds(30)); // the host actor answers at once
  if (lanes.size() >= 8) // forget lanes of runtimes that have stopped
    std::erase_if(lanes, [](auto& entry) { return !caf::actor_cast<caf::actor>(entry.lane); });
  lanes.push_back({rt.host_lane_key(), lane.address(), std::move(host), stats::find_lane(this_caller())});
  return {lane, lanes.back().counters.get()};
}

} // namespace

void submit_host_task(std::function<void()> task) {
  auto rt = current_runtime();
  auto [lane, counters] = host_lane_of_this_thread(*rt);
  runtime_impl::call_guard issuing(*rt);
  if (!lane)
    throw runtime_error("The actormesh runtime has stopped: no new calls are accepted");
  if (counters)
    counters->queued.fetch_add(1, std::memory_order_relaxed);
  caf::anon_send(lane, host_call{call_header{this_caller(), 0}, std::move(task)});
}

} // namespace detail

} // namespace am
