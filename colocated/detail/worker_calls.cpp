#include "colocated/detail/worker_calls.hpp"

#include "actormesh/actors/errors.hpp"
#include "colocated/detail/call_devices.hpp"
#include "colocated/detail/call_wire.hpp"
#include "devices/remote/worker_hosts.hpp"
#include "actormesh/devices/runtime.hpp"
#include "devices/runtime_context.hpp"
#include "sharding/detail/array_state.hpp"
#include "sharding/detail/lowering_state.hpp"

#include <atomic>
#include <map>
#include <optional>

namespace am::detail {

namespace {

using remote::host_call_issued;
using remote::host_outcome;

/// The workers of the call, in process order.
std::vector<int> workers_of(const std::vector<device>& devices) {
  std::set<int> ps;
  for (auto& d : devices)
    ps.insert(d.process_index);
  return {ps.begin(), ps.end()};
}

/// What the workers are asked to run.
worker_call describe(worker_call_kind kind, const call_target& target, const flat_tree& inputs,
                     const std::vector<device>& devices) {
  worker_call c;
  c.kind = kind;
  c.name = target.name;
  if (target.object) {
    auto& record = *target.object;
    const std::string* arguments = record.travelling_bytes();
    if (arguments == nullptr)
      throw value_error("colocated_python: an object of colocated class '" + record.class_name
                        + "' cannot be built in a worker process: its constructor arguments are not all of types "
                          "that travel (booleans, numbers, strings, am::host_array, am::array, containers of "
                          "them, or types with an inspect function)");
    c.is_method = true;
    c.object = worker_object{record.uid, record.class_name, record.remote.constructor, *arguments};
  }
  c.in = spec_tree(inputs.def, specs_of(inputs.leaves));
  for (auto& d : devices)
    c.devices.push_back(d.id);
  return c;
}

/// The inputs' shards on worker `p`, leaf after leaf.
std::vector<shard_future> input_shards(const flat_tree& inputs, int p) {
  std::vector<shard_future> out;
  for (auto& a : inputs.leaves)
    for (auto& f : shards_on(a, p))
      out.push_back(std::move(f));
  return out;
}

/// Sends the call to every worker of `devices`; `outputs_of(p)` lists the output shards promised
/// on worker p. Holds a call_guard while sending, as every call into the runtime does.
std::map<int, host_call_issued> issue(const worker_call& c, const call_target& target, const flat_tree& inputs,
                                      const std::vector<device>& devices,
                                      const std::map<int, std::vector<std::pair<device, value_type>>>& outputs = {}) {
  auto rt = current_context();
  runtime_context::call_guard issuing(*rt);
  auto* link = rt->worker_hosts();
  if (!link)
    throw runtime_error("colocated_python: this process drives no worker processes");
  auto payload = encode(c);
  std::map<int, host_call_issued> issued;
  for (int p : workers_of(devices)) {
    if (target.object)
      target.object->used_in_worker(p);
    auto it = outputs.find(p);
    issued.emplace(p, link->host_call(p, colocated_service, payload, input_shards(inputs, p),
                                      it == outputs.end() ? std::vector<std::pair<device, value_type>>{} : it->second));
  }
  return issued;
}

} // namespace

std::vector<shard_future> shards_on(const array& a, int process) {
  std::map<int, shard_future> by_device;
  for (auto& s : a.addressable_shards())
    if (s.device.process_index == process)
      by_device.emplace(s.device.id, s.data);
  std::vector<shard_future> out;
  for (auto& pl : a.sharding()->shard_placements(a.shape())) {
    if (pl.device.process_index != process)
      continue;
    auto it = by_device.find(pl.device.id);
    if (it == by_device.end())
      throw value_error("colocated_python: an argument has no shard on " + to_string(pl.device));
    out.push_back(it->second);
  }
  return out;
}

bool runs_in_workers(const std::vector<device>& devices) {
  auto rt = current_context();
  bool here = false, there = false; // there: devices this process drives through a worker's link
  for (auto& d : devices) {
    auto reach = rt->reach(d);
    here = here || reach == device_reach::here;
    there = there || reach == device_reach::through_link;
  }
  if (here && there)
    throw value_error("colocated_python: the call's devices " + device_list_text(devices)
                      + " mix the controller's own devices with workers': a call runs either in this process or in "
                        "worker processes");
  return there;
}

flat_tree call_in_workers(const call_target& target, const flat_tree& inputs, const std::vector<device>& devices) {
  auto issued = issue(describe(worker_call_kind::learn, target, inputs, devices), target, inputs, devices);
  // Every worker's outcome first, then the first error (the shards a successful worker named are
  // freed there when the call fails as a whole).
  std::map<int, host_outcome> outcomes;
  std::exception_ptr error;
  for (auto& [p, call] : issued) {
    try {
      outcomes.emplace(p, call.done.get());
    } catch (...) {
      if (!error)
        error = std::current_exception();
    }
  }
  auto rt = current_context(); // the runtime outlives the outcomes' shards
  auto* link = rt->worker_hosts();
  std::map<int, std::size_t> next; // per worker, its next handle
  std::optional<spec_tree> specs;
  for (auto& [p, outcome] : outcomes) {
    auto s = decode_specs(outcome.payload);
    if (!specs)
      specs = s;
    else if (*specs != s && !error)
      error = std::make_exception_ptr(value_error(
        "colocated_python: the worker processes of one call returned different outputs: " + specs->to_string()
        + " and " + s.to_string()));
  }
  if (error) {
    for (auto& [p, outcome] : outcomes)
      for (auto h : outcome.handles)
        link->release(remote::location{p, h, 0});
    std::rethrow_exception(error);
  }
  if (!specs)
    throw runtime_error("colocated_python: the call reached no worker");
  flat_tree results{specs->def(), {}};
  for (auto& spec : specs->leaves())
    results.leaves.push_back(assemble(spec, [&](const shard_placement& pl) {
      auto p = pl.device.process_index;
      auto it = outcomes.find(p);
      if (it == outcomes.end() || next[p] >= it->second.handles.size())
        throw value_error("colocated_python: worker process " + std::to_string(p) + " returned no shard for "
                          + to_string(pl.device));
      return link->adopt(pl.device, it->second.handles[next[p]++], value_type{spec.dtype, block_shape(pl.index)});
    }));
  return results;
}

flat_tree call_in_workers_async(const call_target& target, const flat_tree& inputs,
                                const std::vector<device>& devices, const spec_tree& out) {
  auto c = describe(worker_call_kind::async, target, inputs, devices);
  c.out = out;
  std::map<int, std::vector<std::pair<device, value_type>>> promised;
  for (auto& spec : out.leaves())
    for (auto& pl : spec.sharding->shard_placements(spec.shape))
      promised[pl.device.process_index].emplace_back(pl.device, value_type{spec.dtype, block_shape(pl.index)});
  auto issued = issue(c, target, inputs, devices, promised);
  std::map<int, std::size_t> next;
  flat_tree results{out.def(), {}};
  for (auto& spec : out.leaves())
    results.leaves.push_back(assemble(spec, [&](const shard_placement& pl) {
      auto p = pl.device.process_index;
      auto it = issued.find(p);
      if (it == issued.end())
        throw value_error("colocated_python: output spec " + spec.to_string()
                          + " places a shard outside the call's devices, on " + to_string(pl.device));
      return it->second.outputs.at(next[p]++);
    }));
  return results;
}

future<void> call_in_workers_void(const call_target& target, const flat_tree& inputs,
                                  const std::vector<device>& devices) {
  auto issued = issue(describe(worker_call_kind::no_result, target, inputs, devices), target, inputs, devices);
  struct joint {
    promise<void> all;
    std::atomic<std::size_t> left{0};
    std::atomic<bool> failed{false};
  };
  auto j = std::make_shared<joint>();
  auto result = j->all.get_future();
  j->left = issued.size();
  for (auto& [p, call] : issued) {
    auto done = call.done;
    done.on_ready([j, done] {
      if (auto e = done.shared_state()->error()) {
        if (!j->failed.exchange(true))
          j->all.set_error(e);
      } else if (j->left.fetch_sub(1) == 1 && !j->failed.load()) {
        j->all.set_value();
      }
    });
  }
  return result;
}

void release_in_workers(std::uint64_t uid, const std::set<int>& workers) noexcept {
  try {
    if (!is_running())
      return;
    auto rt = current_context();
    auto* link = rt->worker_hosts();
    if (!link)
      return;
    worker_call c;
    c.kind = worker_call_kind::release_object;
    c.is_method = true;
    c.object.uid = uid;
    auto payload = encode(c);
    for (int p : workers) {
      try {
        link->host_call(p, colocated_service, payload, {}, {});
      } catch (...) {
        // That worker failed or the runtime stops: its instances go with it.
      }
    }
  } catch (...) {
  }
}

} // namespace am::detail
