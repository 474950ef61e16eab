#include "actormesh/colocated/detail/function_core.hpp"

#include "actormesh/actors/errors.hpp"
#include "colocated/detail/call_devices.hpp"
#include "colocated/detail/pending_destructions.hpp"
#include "colocated/detail/pending_outputs.hpp"
#include "colocated/detail/worker_calls.hpp"
#include "actormesh/devices/calls.hpp"
#include "observability/trace_hooks.hpp"

#include <chrono>
#include <thread>

namespace am::detail {

namespace {

/// The cache key of an input signature: structure, and per leaf dtype, shape, sharding and the
/// sharding's device order.
std::string signature_key(const spec_tree& specs) {
  std::string key = specs.def().to_string();
  for (auto& leaf : specs.leaves()) {
    key += '|';
    key += name(leaf.dtype);
    for (auto n : leaf.shape)
      key += "," + std::to_string(n);
    key += ';' + leaf.sharding->to_string() + ';';
    for (auto& d : leaf.sharding->device_assignment())
      key += std::to_string(d.id) + ",";
  }
  return key;
}

/// Waits (briefly, bounded) until the lane has let go of its promise of `done`, which it does right
/// after resolving it. Then this thread owns the error alone and the exception object ends here,
/// where the caller handled it, not on the lane's thread: the two are ordered only by libstdc++'s
/// exception reference count, which ThreadSanitizer cannot see.
template <class T>
void wait_sole_owner(const future<T>& done) {
  auto start = std::chrono::steady_clock::now();
  while (done.shared_state().use_count() > 1 && std::chrono::steady_clock::now() - start < std::chrono::milliseconds(100))
    std::this_thread::yield();
}

} // namespace

function_core::function_core(call_target target, specialization spec)
    : target_(std::move(target)), spec_(std::move(spec)) {
  if (spec_.devices)
    check_runs_here(*spec_.devices);
}

std::shared_ptr<const function_core> function_core::specialized(const specialization& more) const {
  return std::make_shared<const function_core>(target_, merge(spec_, more));
}

std::vector<device> function_core::check_call(const spec_tree& in_specs, const flat_tree& inputs) const {
  for (auto& a : inputs.leaves)
    if (a.is_tracer())
      throw value_error("colocated_python: '" + target_.name + "' was called inside jit with a traced value; "
                        "call it outside jit, on concrete arrays");
  if (spec_.in_specs && *spec_.in_specs != in_specs)
    throw value_error("Input specs in specialization and input specs of arguments must have the same pytree "
                      "structure, but they have the following structural differences:\n   - the specialization has "
                      + spec_.in_specs->to_string() + " and the arguments are " + in_specs.to_string() + ".\n");
  auto devices = call_devices(inputs.leaves, spec_.devices);
  check_runs_here(devices);
  return devices;
}

/// True when `a` and `b` are the same signature without building its key: the same structure, and
/// per leaf the same shape, dtype and sharding object (so the same key; an equal sharding in another
/// object takes the key's path).
bool same_signature_objects(const spec_tree& a, const spec_tree& b) {
  if (a.leaves().size() != b.leaves().size() || a.def() != b.def())
    return false;
  for (std::size_t k = 0; k < a.leaves().size(); ++k) {
    auto& x = a.leaves()[k];
    auto& y = b.leaves()[k];
    if (x.sharding != y.sharding || x.dtype != y.dtype || x.shape != y.shape)
      return false;
  }
  return true;
}

std::shared_ptr<function_core::signature_entry> function_core::entry_for(const spec_tree& in_specs) const {
  {
    // The common case, callers repeating calls on the same arrays' layouts, skips building the key
    // (the shardings' text: most of a call's cost on the caller's side, measured).
    std::lock_guard<std::mutex> guard(mutex_);
    for (auto& r : recent_)
      if (same_signature_objects(r.specs, in_specs))
        return r.entry;
  }
  auto key = signature_key(in_specs);
  std::lock_guard<std::mutex> guard(mutex_);
  auto& e = signatures_[key];
  if (!e)
    e = std::make_shared<signature_entry>();
  if (recent_.size() == max_recent) // each thread's arrays have shardings of their own: keep a few
    recent_.erase(recent_.begin());
  recent_.push_back(recent_signature{in_specs, e});
  return e;
}

std::size_t function_core::known_signatures() const {
  std::lock_guard<std::mutex> guard(mutex_);
  std::size_t n = 0;
  for (auto& [key, e] : signatures_) {
    std::lock_guard<std::mutex> entry_guard(e->mutex);
    n += e->out.has_value() ? 1 : 0;
  }
  return n;
}

flat_tree function_core::call(const flat_tree& inputs) const {
  settle_destructions(); // objects this thread let go of are gone before this call returns
  auto traced = observability::colocated_span(target_.name, "colocated call");
  spec_tree in_specs(inputs.def, specs_of(inputs.leaves));
  auto devices = check_call(in_specs, inputs);
  auto entry = entry_for(in_specs);
  spec_tree out;
  {
    std::lock_guard<std::mutex> guard(entry->mutex); // a second first call waits for the first
    if (!entry->out && spec_.out_specs_fn) {
      auto computed = spec_.out_specs_fn(in_specs); // on the caller's side, once per signature
      for (auto& leaf : computed.leaves())
        if (!leaf.sharding)
          throw value_error("colocated_python: out_specs_fn returned a spec without a sharding: " + leaf.to_string());
      entry->out = std::move(computed);
    }
    if (!entry->out && runs_in_workers(devices)) {
      auto results = call_in_workers(target_, inputs, devices); // runs now, there, and learns
      entry->out = spec_tree(results.def, specs_of(results.leaves));
      return results;
    }
    if (!entry->out) {
      // Unspecialized first call of this signature: run it now, in this thread's lane, and learn.
      auto done = host_call([target = target_.in_flight(), inputs, devices] {
        auto r = run_on_host(target, inputs, devices);
        check_output_devices(r.leaves, devices);
        return r;
      });
      done.wait();
      if (done.shared_state()->error())
        wait_sole_owner(done);
      auto results = done.get();
      entry->out = spec_tree(results.def, specs_of(results.leaves));
      return results;
    }
    out = *entry->out;
  }
  return call_async(inputs, devices, out);
}

flat_tree function_core::call_async(const flat_tree& inputs, const std::vector<device>& devices,
                                    const spec_tree& out) const {
  if (runs_in_workers(devices))
    return call_in_workers_async(target_, inputs, devices, out);
  auto [arrays, pending] = pending_outputs::make(out);
  submit_host_task([target = target_.in_flight(), inputs, devices, pending = std::move(pending)] {
    try {
      auto results = run_on_host(target, inputs, devices);
      check_output_devices(results.leaves, devices);
      pending.resolve(results);
    } catch (...) {
      pending.fail(std::current_exception());
    }
  });
  return flat_tree{out.def(), std::move(arrays)};
}

future<void> function_core::call_void(const flat_tree& inputs) const {
  settle_destructions();
  spec_tree in_specs(inputs.def, specs_of(inputs.leaves));
  auto devices = check_call(in_specs, inputs);
  if (runs_in_workers(devices))
    return call_in_workers_void(target_, inputs, devices);
  return host_call([target = target_.in_flight(), inputs, devices] {
    auto results = run_on_host(target, inputs, devices);
    if (!results.leaves.empty())
      throw value_error("colocated_python: a function declared to return nothing returned "
                        + results.def.to_string());
  });
}

} // namespace am::detail
