#include "actormesh/devices/calls.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/lane.hpp"
#include "actors/detail/messages.hpp"
#include "devices/detail/runtime_impl.hpp"
#include "observability/stats_counters.hpp"

#include <caf/send.hpp>

#include <chrono>
#include <utility>
#include <vector>

namespace am {

// Each call goes to the endpoint of its device (devices/detail/device_endpoint.hpp), whose kind
// knows how this process reaches it.

std::vector<shard_future> execute(const device& d, std::shared_ptr<const program> p,
                                  std::vector<shard_future> inputs) {
  if (!p)
    throw value_error("execute: no program");
  auto rt = detail::current_runtime();
  return rt->route(d).execute(*rt, std::move(p), std::move(inputs));
}

shard_future upload(const device& d, std::vector<std::byte> bytes, value_type type) {
  auto rt = detail::current_runtime();
  return rt->route(d).upload(*rt, std::move(bytes), std::move(type));
}

shard_future upload_written(const device& d, value_type type, buffer_writer write) {
  if (!write)
    throw value_error("upload_written: no writer");
  auto rt = detail::current_runtime();
  return rt->route(d).upload_written(*rt, std::move(type), std::move(write));
}

future<std::vector<std::byte>> fetch(const device& d, shard_future shard) {
  auto rt = detail::current_runtime();
  return rt->route(d).fetch(*rt, std::move(shard));
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
