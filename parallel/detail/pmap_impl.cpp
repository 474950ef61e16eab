#include "actormesh/parallel/detail/pmap_impl.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/runtime.hpp"
#include "parallel/detail/axis_env.hpp"
#include "parallel/detail/batched_effects.hpp"
#include "parallel/detail/batching.hpp"
#include "parallel/detail/mapping.hpp"
#include "parallel/detail/pmap_agreement.hpp"
#include "sharding/detail/elementwise.hpp"
#include "actormesh/sharding/mesh.hpp"
#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/single_device_sharding.hpp"

namespace am::detail {

namespace {

/// JAX's name for the device axis of a pmap without axis_name.
const std::string internal_axis = "_internal_pmap_axis_name";

const std::string& mesh_axis(const std::string& name) { return name.empty() ? internal_axis : name; }

const pmap_layouts& layouts_for(pmap_state& s, const std::vector<device>& devices) {
  std::vector<int> ids;
  for (auto& d : devices)
    ids.push_back(d.id);
  std::lock_guard<std::mutex> guard(s.mutex);
  auto it = s.layouts.find(ids);
  if (it != s.layouts.end())
    return it->second;
  mesh m(device_grid(devices), {mesh_axis(s.axis_name)});
  pmap_layouts l{make_named_sharding(m, P(mesh_axis(s.axis_name))), make_named_sharding(m, P())};
  return s.layouts.emplace(ids, l).first->second;
}

std::vector<device> devices_for(const pmap_state& s, std::int64_t size) {
  if (!s.devices.empty()) {
    for (std::size_t i = 0; i < s.devices.size(); ++i)
      for (std::size_t j = i + 1; j < s.devices.size(); ++j)
        if (s.devices[i].id == s.devices[j].id)
          throw value_error("pmap got " + to_string(s.devices[i]) + " more than once in its devices (positions "
                            + std::to_string(i) + " and " + std::to_string(j)
                            + "): each mapped slice needs a device of its own");
    if (static_cast<std::int64_t>(s.devices.size()) != size)
      throw value_error("Leading axis size of input to pmapped function must equal the number of local devices "
                        "passed to pmap. Got axis_size=" + std::to_string(size) + ", num_local_devices="
                        + std::to_string(s.devices.size()) + ".");
    return s.devices;
  }
  // The cluster's devices (global ids, by process): under `actormesh launch` the mapped axis spans
  // every process, each running its own devices' programs; collectives cross processes.
  auto all = am::devices();
  if (static_cast<std::int64_t>(all.size()) < size)
    throw value_error("compiling computation that requires " + std::to_string(size) + " logical devices, but only "
                      + std::to_string(all.size()) + " XLA devices are available (num_replicas="
                      + std::to_string(size) + ")");
  all.resize(static_cast<std::size_t>(size));
  return all;
}

} // namespace

sharding_ptr stacked_layout(const std::vector<device>& devices, const std::string& axis_name) {
  mesh m(device_grid(devices), {mesh_axis(axis_name)});
  return make_named_sharding(m, P(mesh_axis(axis_name)));
}

namespace {

/// The global arguments of one call and the traced body the plan cache runs on them.
struct prepared_call {
  std::vector<array> global;
  array_function body;
  staged_call staged; ///< the same call for the staged path
};

/// What the checks see of the arguments: the arrays, and for host data an array of its shape and
/// dtype with no data (placed only once the devices are known).
std::vector<array> described(const std::vector<pmap_argument>& given) {
  std::vector<array> out;
  out.reserve(given.size());
  sharding_ptr nowhere; // any layout: a described array is never read
  for (auto& g : given) {
    if (auto* a = std::get_if<array>(&g)) {
      out.push_back(*a);
      continue;
    }
    if (!nowhere)
      nowhere = make_single_device_sharding(am::devices().front());
    auto& h = std::get<host_array>(g);
    out.push_back(abstract_array(h.shape(), h.dtype(), nowhere));
  }
  return out;
}

/// Argument k laid out for the call: one slice per device along dim 0 when mapped, a copy on
/// every device when not. Host data is put straight onto that layout.
array laid_out(const pmap_argument& given, const axis_spec& axis, const pmap_layouts& layouts) {
  if (auto* h = std::get_if<host_array>(&given)) {
    if (!axis.mapped())
      return device_put(*h, layouts.replicated);
    if (*axis.axis == 0)
      return device_put(*h, layouts.stacked);
    return device_put(moveaxis(device_put(*h, layouts.replicated), *axis.axis, 0), layouts.stacked);
  }
  const auto& x = std::get<array>(given);
  if (!axis.mapped())
    return device_put(x, layouts.replicated);
  return device_put(*axis.axis == 0 ? x : moveaxis(x, *axis.axis, 0), layouts.stacked);
}

/// `agree`: check the call against the other processes' first (a call, not an inspection).
prepared_call prepare(pmap_state& s, const array_function& f, const std::vector<pmap_argument>& given, bool agree) {
  const auto args = described(given);
  auto in_axes = normalize_in_axes(match_axes(s.in_axes, args.size(), "pmap", "in_axes"), args, "pmap");
  auto size = mapped_size(in_axes, args, "pmap");
  auto devices = devices_for(s, size);
  if (agree)
    check_pmap_agreement(s.axis_name, devices, in_axes, s.out_axes, args);
  auto* layouts = &layouts_for(s, devices); // map nodes stay where they are
  prepared_call call;
  call.staged = staged_call{&f, {}, {}, size, s.axis_name, s.out_axes, layouts->stacked, layouts->replicated};
  for (auto& a : in_axes)
    call.staged.mapped.push_back(a.mapped());
  for (std::size_t k = 0; k < given.size(); ++k)
    call.global.push_back(laid_out(given[k], in_axes[k], *layouts));
  call.body = [layouts, in_axes, size, f, name = s.axis_name,
               out_specs = s.out_axes](const std::vector<array>& tracers) {
    std::vector<array> slices;
    std::vector<batched> inputs;
    for (std::size_t k = 0; k < tracers.size(); ++k) {
      auto shape = tracers[k].shape();
      if (in_axes[k].mapped())
        shape.erase(shape.begin());
      slices.push_back(abstract_array(shape, tracers[k].dtype(), layouts->replicated));
      inputs.push_back({tracers[k], in_axes[k].mapped()});
    }
    traced_function traced;
    {
      axis_scope scope({name, size, layouts->replicated});
      traced = trace_function(f, slices, /*keep_effects=*/true);
    }
    batch_axis axis{name, size, layouts->stacked, layouts->stacked};
    auto outs = batch_function(traced, inputs, axis);
    // Each device's callback sees its own slice, as JAX's pmap prints.
    replay_batched_effects(traced, outs, {layouts->stacked, layouts->replicated});
    auto out_axes = match_axes(out_specs, outs.size(), "pmap", "out_axes");
    std::vector<array> result;
    for (std::size_t k = 0; k < outs.size(); ++k) {
      auto out = outs[k];
      if (out.mapped)
        out.value = broadcast_to(out.value, out.value.shape(), layouts->stacked);
      else if (!out_axes[k].mapped())
        out.value = broadcast_to(out.value, out.value.shape(), layouts->replicated);
      result.push_back(place_output(out, out_axes[k], axis, "pmap"));
    }
    return result;
  };
  return call;
}

} // namespace

std::vector<array> pmap_call(pmap_state& s, const array_function& f, const std::vector<pmap_argument>& args) {
  auto call = prepare(s, f, args, /*agree=*/true);
  call.staged.global = call.global;
  if (auto staged = run_staged(*s.staged, call.staged))
    return std::move(*staged);
  return s.cache->call(call.global, call.body);
}

std::size_t pmap_cache_size(const pmap_state& s) { return s.cache->size() + staged_programs(*s.staged); }

std::string pmap_lowered_text(pmap_state& s, const array_function& f, const std::vector<pmap_argument>& args) {
  auto call = prepare(s, f, args, /*agree=*/false);
  return s.cache->lowered_text(call.global, call.body);
}

} // namespace am::detail
