#include "actor_mesh/detail/worker_meshes.hpp"

#include "actormesh/actor_mesh/detail/class_registry.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/value_wire.hpp"
#include "actormesh/colocated/detail/constructor_wire.hpp"
#include "devices/remote/host_services.hpp"
#include "devices/remote/worker_hosts.hpp"
#include "devices/runtime_context.hpp"
#include "sharding/detail/sharding_codec.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>

namespace am::detail {

namespace {

const std::string actor_mesh_service = "am.actor_mesh";

/// What the controller asks a worker, as it travels.
struct worker_mesh_request {
  bool stop = false; ///< false: build this worker's points; true: stop them
  std::string key;
  std::string class_name;
  std::string constructor;
  std::string arguments;
  std::int32_t max_restarts = 0;
  std::int64_t window_ms = 0;
  bool stop_mesh = false;
  std::vector<std::string> axis_names;
  std::vector<std::int64_t> axis_sizes;
  std::vector<std::int32_t> processes;            ///< by rank
  std::vector<std::vector<std::int32_t>> devices; ///< by rank, the device ids
  std::int32_t controller = 0;                    ///< the process the part reports its events to
};

template <class Inspector>
bool inspect(Inspector& f, worker_mesh_request& r) {
  return f(r.stop, r.key, r.class_name, r.constructor, r.arguments, r.max_restarts, r.window_ms, r.stop_mesh,
           r.axis_names, r.axis_sizes, r.processes, r.devices, r.controller);
}

/// A supervision event as it travels (its kind as a number).
struct event_on_wire {
  std::uint8_t what = 0;
  std::string class_name;
  std::int32_t rank = 0;
  std::vector<std::int64_t> coords;
  std::string point;
  std::int32_t process = 0;
  std::string cause;
};

template <class Inspector>
bool inspect(Inspector& f, event_on_wire& e) {
  return f(e.what, e.class_name, e.rank, e.coords, e.point, e.process, e.cause);
}

std::string encode_request(const worker_mesh_request& request) {
  wire_writer w;
  write_value(w, request);
  return w.take();
}

worker_mesh_request decode_request(const std::string& bytes) {
  wire_reader r(bytes);
  auto request = read_value<worker_mesh_request>(r);
  r.finish();
  if (request.processes.size() != request.devices.size())
    throw value_error("actor mesh '" + request.key + "': the request names " + std::to_string(request.processes.size())
                      + " points and devices for " + std::to_string(request.devices.size()));
  return request;
}

} // namespace

std::string encode_event(const supervision_event& event) {
  event_on_wire e{static_cast<std::uint8_t>(event.what), event.class_name, event.rank, event.coords,
                  event.point,                           event.process,    event.cause};
  wire_writer w;
  write_value(w, e);
  return w.take();
}

supervision_event decode_event(const std::string& bytes) {
  wire_reader r(bytes);
  auto e = read_value<event_on_wire>(r);
  r.finish();
  if (e.what > static_cast<std::uint8_t>(supervision_event::kind::broadcast_failed))
    throw value_error("malformed supervision event: kind " + std::to_string(e.what));
  supervision_event event;
  event.what = static_cast<supervision_event::kind>(e.what);
  event.class_name = std::move(e.class_name);
  event.rank = e.rank;
  event.coords = std::move(e.coords);
  event.point = std::move(e.point);
  event.process = e.process;
  event.cause = std::move(e.cause);
  return event;
}

namespace {

/// The parts of meshes this worker holds for its controller, by key, until it asks to stop them.
class worker_mesh_parts {
public:
  void add(const std::string& key, std::shared_ptr<mesh_core> core) {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!parts_.emplace(key, std::move(core)).second)
      throw value_error("actor mesh '" + key + "' already has a part in this process");
  }

  /// Takes the part of `key` (null when there is none).
  std::shared_ptr<mesh_core> take(const std::string& key) {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = parts_.find(key);
    if (it == parts_.end())
      return nullptr;
    auto core = std::move(it->second);
    parts_.erase(it);
    return core;
  }

private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<mesh_core>> parts_;
};

const service_key<worker_mesh_parts> worker_mesh_parts_key{"actor mesh parts of the controller's meshes"};

/// This worker's points of the request's layout built as a mesh part (the lane's work).
void build_part(runtime_context& rt, const worker_mesh_request& request) {
  auto info = find_actor_class(request.class_name);
  auto made = find_constructor(request.constructor)(request.arguments);
  if (!made)
    throw type_error("actor class '" + request.class_name + "': its constructor's arguments cannot travel to a worker");
  auto factory = std::static_pointer_cast<actor_factory>(made);
  int here = rt.process_index();
  std::vector<actor_point> points(request.processes.size());
  for (std::size_t r = 0; r < points.size(); ++r) {
    points[r].process = request.processes[r];
    if (points[r].process == here) // another process's devices are not this one's to look up
      points[r].devices = devices_by_id(std::vector<int>(request.devices[r].begin(), request.devices[r].end()),
                                        "actor mesh '" + request.key + "': a point names a device");
  }
  actor_layout layout(request.axis_names, request.axis_sizes, std::move(points));
  supervision_policy policy{request.max_restarts, std::chrono::milliseconds(request.window_ms), request.stop_mesh};
  auto parts = rt.service(worker_mesh_parts_key, [] { return std::make_shared<worker_mesh_parts>(); });
  parts->add(request.key, spawn_mesh_part(request.key, request.class_name, layout, *factory, policy, endpoints_of(*info),
                                          request.controller));
}

/// The worker's service: builds or stops its part in the controller thread's lane.
remote::host_answer serve(remote::host_request request) {
  auto rt = current_context();
  auto decoded = std::make_shared<worker_mesh_request>(decode_request(request.payload));
  promise<remote::host_result> done;
  remote::host_answer answer;
  answer.done = done.get_future();
  request.submit([rt, decoded, done]() mutable {
    try {
      if (!decoded->stop) {
        build_part(*rt, *decoded);
        done.set_value(remote::host_result{});
        return;
      }
      auto parts = rt->service(worker_mesh_parts_key, [] { return std::make_shared<worker_mesh_parts>(); });
      auto core = parts->take(decoded->key);
      if (!core) {
        done.set_value(remote::host_result{}); // never built here, or stopped already
        return;
      }
      stop_mesh(*core).on_ready([done]() mutable { done.set_value(remote::host_result{}); });
    } catch (...) {
      done.set_error(std::current_exception());
    }
  });
  return answer;
}

const bool registered = (remote::register_host_service(actor_mesh_service, &serve), true);

/// Sends `request` to every worker of `workers`: their answers, by worker.
std::map<int, future<remote::host_outcome>> send_to_workers(runtime_context& rt, const std::vector<int>& workers,
                                                            const worker_mesh_request& request) {
  runtime_context::call_guard sending(rt);
  auto* link = rt.worker_hosts();
  if (!link)
    throw runtime_error("actor meshes: this process drives no worker processes");
  auto payload = encode_request(request);
  std::map<int, future<remote::host_outcome>> answers;
  for (int p : workers)
    answers.emplace(p, link->host_call(p, actor_mesh_service, payload, {}, {}).done);
  return answers;
}

} // namespace

void spawn_in_workers(runtime_context& rt, const std::vector<int>& workers, const std::string& key,
                      const std::string& class_name, const actor_layout& layout, const supervision_policy& policy,
                      const remote_construction& remote, std::chrono::milliseconds timeout) {
  auto arguments = remote.encode_arguments ? remote.encode_arguments() : std::nullopt;
  if (!arguments)
    throw type_error("actor_class::spawn: actors of class '" + class_name
                     + "' in worker processes are built there from the constructor's arguments, and these "
                       "arguments do not travel (booleans, numbers, strings, standard containers, structs with an "
                       "inspect overload, am::host_array do)");
  worker_mesh_request request;
  request.key = key;
  request.class_name = class_name;
  request.constructor = remote.constructor;
  request.arguments = std::move(*arguments);
  request.max_restarts = policy.max_restarts;
  request.window_ms = policy.window.count();
  request.stop_mesh = policy.stop_mesh;
  request.controller = rt.process_index();
  request.axis_names = layout.axis_names();
  request.axis_sizes = layout.axis_sizes();
  for (auto& point : layout.points()) {
    request.processes.push_back(point.process);
    std::vector<std::int32_t> ids;
    for (auto& d : point.devices)
      ids.push_back(d.id);
    request.devices.push_back(std::move(ids));
  }
  auto answers = send_to_workers(rt, workers, request);
  std::exception_ptr first;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (auto& [p, answer] : answers) {
    try {
      auto left = std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration::zero());
      if (!answer.wait_for(left))
        throw timeout_error("actor_class::spawn: worker process " + std::to_string(p) + " did not build its actors of class '"
                            + class_name + "' within " + std::to_string(timeout.count()) + " ms");
      answer.get();
    } catch (...) {
      if (!first)
        first = std::current_exception();
    }
  }
  if (!first)
    return;
  try {
    stop_in_workers(rt, workers, key).wait_for(timeout); // the parts that were built
  } catch (...) { // the first failure is what the caller hears of
  }
  std::rethrow_exception(first);
}

future<void> stop_in_workers(runtime_context& rt, const std::vector<int>& workers, const std::string& key) {
  worker_mesh_request request;
  request.stop = true;
  request.key = key;
  promise<void> all;
  auto answers = send_to_workers(rt, workers, request);
  auto remaining = std::make_shared<std::atomic<std::size_t>>(answers.size());
  if (answers.empty())
    all.set_value();
  for (auto& [p, answer] : answers)
    answer.on_ready([remaining, all]() mutable {
      if (remaining->fetch_sub(1) == 1)
        all.set_value();
    });
  return all.get_future();
}

} // namespace am::detail
