#include "devices/remote/call_server.hpp"

#include "actors/detail/log.hpp"
#include "actors/errors.hpp"
#include "actors/lane.hpp"
#include "devices/collectives/shard_transfers.hpp"
#include "devices/detail/lane_calls.hpp"
#include "devices/detail/runtime_impl.hpp"
#include "devices/remote/remote_messages.hpp"
#include "devices/remote/remote_wire.hpp"

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

namespace {

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

const std::shared_ptr<device_outbox>& lane_of(server_state& st, std::uint64_t caller, const device_endpoint& ep) {
  auto& box = st.lanes[{caller, ep.dev.id}];
  if (!box) {
    box = std::make_shared<device_outbox>(new_caller_id());
    st.rt->register_outbox(box);
  }
  return box;
}

/// The endpoint of device `id` of this process (am::runtime_error for another process's device,
/// am::value_error for an unknown one).
const device_endpoint& local_endpoint(runtime_impl& rt, int id) { return rt.endpoint(rt.endpoint(id).dev); }

/// A transfer's other end must be another process of the cluster.
void check_peer(runtime_impl& rt, int peer) {
  if (peer < 0 || peer >= rt.cluster().process_count() || peer == rt.process_index())
    throw value_error("A transfer names process " + std::to_string(peer) + " as its other end, but worker process "
                      + std::to_string(rt.process_index()) + " is in a cluster of "
                      + std::to_string(rt.cluster().process_count()) + " processes");
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
      send_in_lane(rt, ep, lane_of(st, q.caller, ep), std::move(call));
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
      send_in_lane(rt, ep, lane_of(st, q.caller, ep), upload_call{std::move(shared), q.type, std::move(out)});
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
      send_in_lane(rt, ep, lane_of(st, q.caller, ep), fetch_call{shard_of(st, q.inputs[0]), std::move(out)});
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
      st.shards.erase(id);
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
