#include "devices/remote/call_server.hpp"

#include "actors/detail/log.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/lane.hpp"
#include "devices/collectives/shard_transfers.hpp"
#include "devices/detail/actor_endpoint.hpp"
#include "devices/detail/runtime_impl.hpp"
#include "devices/remote/host_services.hpp"
#include "devices/remote/remote_messages.hpp"
#include "devices/remote/remote_wire.hpp"
#include "actors/detail/messages.hpp"

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/spawn_options.hpp>
#include <caf/stateful_actor.hpp>

#include <cstring>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace am::detail::remote {

/// A host call's work has ended (sent by whichever thread ended it to the call server, which names
/// the result's shards and answers). Local only.
struct host_call_done {
  caf::actor sink;
  std::uint64_t reply_id = 0;
  future<host_result> done;
};

} // namespace am::detail::remote

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(am::detail::remote::host_call_done)

namespace am::detail::remote {

namespace {

/// A controller thread's host lane on this worker: the local caller id standing for it, and the
/// sequence number of its next host task.
struct host_lane {
  caller_id id = 0;
  std::uint64_t next = 0;
};

/// Handles this worker names itself (a host call's shards the controller learns of in the answer)
/// have the top bit set; the controller's own count from 1 and never get there.
constexpr std::uint64_t worker_handle_bit = std::uint64_t{1} << 63;

/// What one call server keeps.
struct server_state {
  runtime_impl* rt = nullptr;
  promise<void> stopped;
  bool ready = false;
  /// Requests that came before the devices were up, with who sent them.
  std::vector<std::pair<caf::actor, std::string>> early;
  /// The programs decoded so far (the same bytes give the same program object, compiled once).
  program_cache programs;
  /// The shards the controller holds handles for.
  std::unordered_map<std::uint64_t, shard_future> shards;
  /// One lane per (controller caller, device): the outbox and its local caller id.
  std::map<std::pair<std::uint64_t, int>, std::shared_ptr<device_outbox>> lanes;
  /// One host lane per controller caller.
  std::map<std::uint64_t, host_lane> host_lanes;
  /// The last handle this worker named.
  std::uint64_t last_worker_handle = 0;
  /// This server (weakly: the threads that end host calls tell it).
  caf::actor_addr self;
};

using server_actor = caf::stateful_actor<server_state>;

/// Sends `a` to the controller's reply sink (from any thread).
void answer(const caf::actor& sink, const reply& a) {
  if (sink)
    caf::anon_send(sink, done_atom::value, encode(a));
}

/// Answers `id` with `f`'s outcome once it is there (ok, or its error).
void answer_when_ready(const caf::actor& sink, std::uint64_t id, const shard_future& f) {
  f.on_ready([sink, id, f] {
    auto error = f.shared_state()->error();
    if (error) {
      answer(sink, error_reply(id, error));
    } else {
      reply a;
      a.id = id;
      answer(sink, a);
    }
  });
}

/// The shard of handle `h`; am::value_error when the controller names one this worker lacks.
const shard_future& shard_of(server_state& st, std::uint64_t h) {
  auto it = st.shards.find(h);
  if (it == st.shards.end())
    throw value_error("Worker process " + std::to_string(st.rt->process_index()) + " has no shard with handle "
                      + std::to_string(h) + " (released, or its call never reached this worker)");
  return it->second;
}

/// Registers a new shard under the controller's handle (a reused handle is refused).
void keep(server_state& st, std::uint64_t h, shard_future f) {
  if (!st.shards.emplace(h, std::move(f)).second)
    throw value_error("Handle " + std::to_string(h) + " is already in use on worker process "
                      + std::to_string(st.rt->process_index()));
}

const std::shared_ptr<device_outbox>& lane_of(server_state& st, std::uint64_t caller, const actor_endpoint& ep) {
  auto& box = st.lanes[{caller, ep.dev.id}];
  if (!box) {
    box = std::make_shared<device_outbox>(new_caller_id());
    st.rt->register_outbox(box);
  }
  return box;
}

/// The endpoint of device `id` of this process (am::runtime_error for another process's device,
/// am::value_error for an unknown one).
const actor_endpoint& local_endpoint(runtime_impl& rt, int id) { return rt.own_endpoint(rt.endpoint(id).dev); }

/// A transfer's other end must be another process of the cluster.
void check_peer(runtime_impl& rt, int peer) {
  if (peer < 0 || peer >= rt.cluster().process_count() || peer == rt.process_index())
    throw value_error("A transfer names process " + std::to_string(peer) + " as its other end, but worker process "
                      + std::to_string(rt.process_index()) + " is in a cluster of "
                      + std::to_string(rt.cluster().process_count()) + " processes");
}

/// Hands a host call's request to its service: the inputs by handle, the outputs kept under the
/// controller's handles at once, and the end told to this server (host_call_done).
void run_host_call(server_state& st, const caf::actor& sink, request& q) {
  auto& rt = *st.rt;
  auto service = find_host_service(q.service);
  host_request hq;
  hq.payload = std::move(q.bytes);
  for (auto h : q.inputs)
    hq.inputs.push_back(shard_of(st, h));
  hq.output_count = q.outputs.size() - 1;
  auto& lane = st.host_lanes[q.caller];
  if (lane.id == 0)
    lane.id = new_caller_id();
  hq.submit = [&rt, &lane](std::function<void()> task) {
    runtime_impl::call_guard issuing(rt); // am::runtime_error once the runtime stops
    caf::anon_send(rt.host(), host_call{call_header{lane.id, lane.next++}, std::move(task)});
  };
  auto answer_now = service(std::move(hq));
  if (answer_now.outputs.size() != q.outputs.size() - 1)
    throw runtime_error("host service '" + q.service + "' returned " + std::to_string(answer_now.outputs.size())
                        + " outputs for a request naming " + std::to_string(q.outputs.size() - 1));
  for (std::size_t k = 0; k < answer_now.outputs.size(); ++k) {
    keep(st, q.outputs[k + 1], answer_now.outputs[k]);
    answer_when_ready(sink, q.outputs[k + 1], answer_now.outputs[k]);
  }
  auto done = answer_now.done;
  auto server = st.self;
  auto reply_id = q.outputs[0];
  done.on_ready([server, sink, reply_id, done] {
    if (auto s = caf::actor_cast<caf::actor>(server))
      caf::anon_send(s, host_call_done{sink, reply_id, done});
  });
}

/// A host call has ended: names its result's shards and answers.
void finish_host_call(server_state& st, host_call_done& msg) {
  if (auto error = msg.done.shared_state()->error()) {
    answer(msg.sink, error_reply(msg.reply_id, error));
    return;
  }
  auto& result = msg.done.get();
  reply a;
  a.id = msg.reply_id;
  a.bytes = result.payload;
  for (auto& f : result.shards) {
    auto h = worker_handle_bit | ++st.last_worker_handle;
    st.shards.emplace(h, f);
    a.handles.push_back(h);
  }
  answer(msg.sink, a);
}

/// Runs one decoded request; throws for a request that cannot be issued (answered by the caller).
void run(server_state& st, const caf::actor& sink, request& q) {
  auto& rt = *st.rt;
  switch (q.kind) {
    case request_kind::execute: {
      auto& ep = local_endpoint(rt, q.device);
      program_call call{q.code, {}, {}};
      for (auto h : q.inputs)
        call.inputs.push_back(shard_of(st, h));
      call.outputs.resize(q.outputs.size());
      for (std::size_t k = 0; k < q.outputs.size(); ++k) {
        auto f = call.outputs[k].get_future();
        keep(st, q.outputs[k], f);
        answer_when_ready(sink, q.outputs[k], f);
      }
      ep.send_in_lane(rt, lane_of(st, q.caller, ep), std::move(call));
      return;
    }
    case request_kind::upload: {
      auto& ep = local_endpoint(rt, q.device);
      std::vector<std::byte> bytes(q.bytes.size());
      if (!bytes.empty())
        std::memcpy(bytes.data(), q.bytes.data(), bytes.size());
      promise<buffer_ref> out;
      auto f = out.get_future();
      keep(st, q.outputs[0], f);
      answer_when_ready(sink, q.outputs[0], f);
      auto shared = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
      ep.send_in_lane(rt, lane_of(st, q.caller, ep), upload_call{std::move(shared), q.type, std::move(out), {}});
      return;
    }
    case request_kind::fetch: {
      auto& ep = local_endpoint(rt, q.device);
      promise<std::vector<std::byte>> out;
      auto f = out.get_future();
      auto id = q.outputs[0];
      f.on_ready([sink, id, f] {
        if (auto error = f.shared_state()->error()) {
          answer(sink, error_reply(id, error));
          return;
        }
        auto& bytes = f.get();
        reply a;
        a.id = id;
        a.bytes.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        answer(sink, a);
      });
      ep.send_in_lane(rt, lane_of(st, q.caller, ep), fetch_call{shard_of(st, q.inputs[0]), std::move(out)});
      return;
    }
    case request_kind::release:
      return; // its `released` handles are gone already
    case request_kind::send: {
      auto& dev = local_endpoint(rt, q.device).dev;
      check_peer(rt, q.peer);
      shard_transfers::of(rt)->send(dev, shard_of(st, q.inputs[0]), q.peer, q.tag);
      return;
    }
    case request_kind::receive: {
      auto& dev = local_endpoint(rt, q.device).dev;
      check_peer(rt, q.peer);
      auto f = shard_transfers::of(rt)->receive(q.peer, dev, q.type, q.tag);
      keep(st, q.outputs[0], f);
      answer_when_ready(sink, q.outputs[0], f);
      return;
    }
    case request_kind::host_call:
      run_host_call(st, sink, q);
      return;
    case request_kind::retire_caller: {
      if (auto it = st.host_lanes.find(q.caller); it != st.host_lanes.end()) {
        // After the host calls sent before (this server's messages to the host actor keep order).
        caf::anon_send(rt.host(), host_lane_retire{it->second.id});
        st.host_lanes.erase(it);
      }
      std::erase_if(st.lanes, [&](auto& lane) { return lane.first.first == q.caller; }); // queued work keeps its outbox
      return;
    }
    case request_kind::stop:
      st.stopped.set_value();
      return;
  }
}

/// Decodes and runs one request; every failure is answered (when the request names outputs) and
/// logged, never thrown: the server keeps serving.
void handle(server_state& st, const caf::actor& sink, const std::string& bytes) {
  request q;
  try {
    q = decode_request(bytes, &st.programs);
  } catch (const std::exception& e) {
    log(log_level::warning, "single-controller: refused a request of {} bytes: {}", bytes.size(), e.what());
    return;
  }
  for (auto h : q.released)
    st.shards.erase(h);
  try {
    run(st, sink, q);
  } catch (...) {
    auto error = std::current_exception();
    for (auto id : q.outputs) {
      st.shards.erase(id); // a host call's reply id names no shard: erasing it is harmless
      answer(sink, error_reply(id, error));
    }
    if (q.outputs.empty()) {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        log(log_level::warning, "single-controller: a request failed: {}", e.what());
      }
    }
  }
}

caf::behavior server_behavior(server_actor* self, runtime_impl* rt, promise<void> stopped) {
  self->state.rt = rt;
  self->state.stopped = std::move(stopped);
  self->state.self = self->address();
  self->set_default_handler(caf::drop);
  return {
    [self](call_atom, const std::string& bytes) {
      auto sink = caf::actor_cast<caf::actor>(self->current_sender());
      auto& st = self->state;
      if (!st.ready) {
        st.early.emplace_back(std::move(sink), bytes);
        return;
      }
      handle(st, sink, bytes);
    },
    [self](host_call_done& msg) { finish_host_call(self->state, msg); },
    [self](ready_atom) {
      auto& st = self->state;
      st.ready = true;
      auto early = std::move(st.early);
      for (auto& [sink, bytes] : early)
        handle(st, sink, bytes);
    },
  };
}

} // namespace

caf::actor spawn_call_server(caf::actor_system& system, runtime_impl& rt, promise<void> stopped) {
  return system.spawn<caf::detached>(server_behavior, &rt, std::move(stopped));
}

} // namespace am::detail::remote
