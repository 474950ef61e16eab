// The worker's side of colocated calls in single-controller mode (see worker_calls.hpp): the host
// service that decodes a call, rebuilds its inputs from the shards the controller named (the
// host-local part of each argument: its global sharding, this process's shards), and runs it in
// the controller thread's host lane here, through the same run_on_host as a local call.
#include "actormesh/actors/errors.hpp"
#include "colocated/detail/call_devices.hpp"
#include "colocated/detail/call_wire.hpp"
#include "actormesh/colocated/detail/constructor_wire.hpp"
#include "colocated/detail/pending_outputs.hpp"
#include "actormesh/colocated/detail/registry.hpp"
#include "colocated/detail/worker_calls.hpp"
#include "devices/runtime_context.hpp"
#include "devices/remote/host_services.hpp"
#include "sharding/detail/addressable.hpp"
#include "sharding/detail/array_state.hpp"
#include "sharding/detail/sharding_codec.hpp"

#include <map>
#include <mutex>

namespace am::detail {

namespace {

using remote::host_answer;
using remote::host_request;
using remote::host_result;

/// The objects this worker holds instances of, by the controller's id: a record each (built from
/// the travelling constructor), kept until the controller lets go; calls in flight hold it too, so
/// its instances go after them.
class worker_objects {
public:
  std::shared_ptr<const object_record> record_for(const worker_object& o) {
    std::lock_guard<std::mutex> guard(mutex_);
    auto& slot = records_[o.uid];
    if (!slot) {
      auto make = find_constructor(o.constructor);
      slot = std::make_shared<const object_record>(o.class_name, [make, arguments = o.arguments] {
        return make(arguments);
      });
    }
    return slot;
  }

  void forget(std::uint64_t uid) {
    std::shared_ptr<const object_record> gone; // released outside the lock
    std::lock_guard<std::mutex> guard(mutex_);
    if (auto it = records_.find(uid); it != records_.end()) {
      gone = std::move(it->second);
      records_.erase(it);
    }
  }

private:
  std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<const object_record>> records_;
};

/// A worker's records of the controller's colocated objects.
const service_key<worker_objects> worker_objects_key{"colocated worker objects"};

std::shared_ptr<worker_objects> objects_of(runtime_context& rt) {
  return rt.service(worker_objects_key, [] { return std::make_shared<worker_objects>(); });
}

/// The inputs as this process sees them: each argument with its global sharding, this process's
/// shards taken in order from `shards`, and stand-ins for the others'.
flat_tree host_local_inputs(const spec_tree& specs, const std::vector<shard_future>& shards, int here) {
  flat_tree inputs{specs.def(), {}};
  std::size_t next = 0;
  for (auto& spec : specs.leaves())
    inputs.leaves.push_back(assemble(spec, [&](const shard_placement& pl) {
      // Another process's shard stands in as a multi-controller array's do (a plan indexes shards
      // by placement); work here never waits on it.
      if (pl.device.process_index != here)
        return remote_shard(pl.device);
      if (next >= shards.size())
        throw value_error("colocated_python: the call names fewer input shards than its arguments have here");
      return shards[next++];
    }));
  if (next != shards.size())
    throw value_error("colocated_python: the call names more input shards than its arguments have here");
  return inputs;
}

/// Runs the call in its lane and ends `done` (with the results' specs and shards for a first call).
void run_call(worker_call_kind kind, call_target target, flat_tree inputs, std::vector<device> devices, int here,
              std::optional<pending_outputs> pending, promise<host_result> done) {
  try {
    auto results = run_on_host(target, inputs, devices);
    host_result answer;
    switch (kind) {
      case worker_call_kind::learn:
        check_output_devices(results.leaves, devices);
        answer.payload = encode_specs(spec_tree(results.def, specs_of(results.leaves)));
        for (auto& a : results.leaves)
          for (auto& f : shards_on(a, here)) {
            f.wait(); // the controller adopts computed shards; a failed one fails the call
            if (auto e = f.shared_state()->error())
              std::rethrow_exception(e);
            answer.shards.push_back(f);
          }
        break;
      case worker_call_kind::async:
        check_output_devices(results.leaves, devices);
        pending->resolve(results);
        break;
      case worker_call_kind::no_result:
        if (!results.leaves.empty())
          throw value_error("colocated_python: a function declared to return nothing returned " + results.def.to_string());
        break;
      case worker_call_kind::release_object:
        break;
    }
    done.set_value(std::move(answer));
  } catch (...) {
    if (pending)
      pending->fail(std::current_exception());
    done.set_error(std::current_exception());
  }
}

host_answer serve(host_request request) {
  auto rt = current_context();
  auto c = decode_worker_call(request.payload);
  promise<host_result> done;
  host_answer answer;
  answer.done = done.get_future();
  if (c.kind == worker_call_kind::release_object) {
    objects_of(*rt)->forget(c.object.uid);
    done.set_value(host_result{});
    return answer;
  }
  int here = rt->process_index();
  auto devices = devices_by_id(c.devices, "colocated_python: the call names a device it cannot run on");
  call_target target{c.name, nullptr};
  if (c.is_method) {
    find_method(c.object.class_name, c.name); // am::value_error now, rather than in the lane
    target.object = objects_of(*rt)->record_for(c.object);
  } else {
    find_function(c.name);
  }
  auto inputs = host_local_inputs(c.in, request.inputs, here);
  std::optional<pending_outputs> pending;
  if (c.kind == worker_call_kind::async) {
    auto [arrays, promises] = pending_outputs::make(c.out);
    for (auto& a : arrays)
      for (auto& f : shards_on(a, here))
        answer.outputs.push_back(f);
    pending = std::move(promises);
  }
  if (answer.outputs.size() != request.output_count)
    throw value_error("colocated_python: the call promises " + std::to_string(answer.outputs.size())
                      + " output shards here but the controller named " + std::to_string(request.output_count));
  request.submit([kind = c.kind, target = std::move(target), inputs = std::move(inputs), devices = std::move(devices),
                  here, pending = std::move(pending), done = std::move(done)]() mutable {
    run_call(kind, std::move(target), std::move(inputs), std::move(devices), here, std::move(pending), std::move(done));
  });
  return answer;
}

const bool registered = (remote::register_host_service(colocated_service, &serve), true);

} // namespace

} // namespace am::detail
