#include "actormesh/sharding/debugging.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/calls.hpp"
#include "actormesh/sharding/detail/trace.hpp"
#include "actormesh/sharding/host_array_print.hpp"

#include <fmt/args.h>
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <mutex>

namespace am {

namespace detail {

namespace {

/// Debug output of several lanes at once comes out a line at a time.
std::mutex& output_mutex() {
  static std::mutex m;
  return m;
}

/// The shard of `x` on device `d` among its addressable shards (the first copy there), or null.
const shard* shard_on(const std::vector<shard>& shards, const device& d) {
  for (auto& s : shards)
    if (s.device.id == d.id)
      return &s;
  return nullptr;
}

} // namespace

void schedule_debug_effect(const trace_effect& effect) {
  if (effect.values.empty())
    return;
  std::vector<std::vector<shard>> shards;
  for (auto& v : effect.values)
    shards.push_back(v.addressable_shards());
  // One task per device of the first value, with every value's shard on that device.
  for (auto& first : shards.front()) {
    std::vector<shard> here;
    for (std::size_t k = 0; k < shards.size(); ++k) {
      const shard* s = shard_on(shards[k], first.device);
      if (s == nullptr)
        throw value_error("am::debug_callback: its values must be on the same devices, but value " + std::to_string(k)
                          + " has no shard on " + to_string(first.device));
      here.push_back(*s);
    }
    submit_host_task([body = effect.body, here = std::move(here)] {
      try {
        std::vector<host_array> values;
        for (auto& s : here)
          values.push_back(s.to_host()); // waits for this device's shard only
        body(values);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> guard(output_mutex());
        std::fprintf(stderr, "am::debug_callback: the callback failed: %s\n", e.what());
      }
    });
  }
}

void debug_effect(debug_effect_function body, std::vector<array> values) {
  for (auto& v : values)
    if (v.state() == nullptr)
      throw value_error("am::debug_callback: Use of an empty am::array");
  if (auto* t = current_trace()) {
    if (!t->accepts_effects())
      throw value_error("internal: am::debug_callback inside a trace that takes no debug effects");
    t->add_effect(trace_effect{std::move(body), std::move(values)});
    return;
  }
  schedule_debug_effect(trace_effect{std::move(body), std::move(values)});
}

} // namespace detail

void debug_print(const std::string& format, const std::vector<array>& values) {
  // The format is checked here, on the caller's thread, by rendering it once with "?" for each value.
  auto render = [format](const std::vector<std::string>& texts) {
    fmt::dynamic_format_arg_store<fmt::format_context> args;
    for (auto& t : texts)
      args.push_back(t);
    return fmt::vformat(format, args);
  };
  try {
    (void)render(std::vector<std::string>(values.size(), "?"));
  } catch (const fmt::format_error& e) {
    throw value_error("am::debug_print: the format '" + format + "' does not fit " + std::to_string(values.size())
                      + " value(s): " + e.what());
  }
  detail::debug_effect(
    [render](const std::vector<host_array>& shards) {
      std::vector<std::string> texts;
      for (auto& s : shards) // JAX formats a 0-d array as its item: a float as Python prints a double
        texts.push_back(to_string(s.ndim() == 0 && is_floating(s.dtype()) ? s.astype(dtype::float64) : s));
      const std::string line = render(texts) + "\n";
      std::lock_guard<std::mutex> guard(detail::output_mutex());
      std::fwrite(line.data(), 1, line.size(), stdout);
      std::fflush(stdout);
    },
    values);
}

void effects_barrier() {
  host_call([] {}).wait(); // this thread's lane runs its tasks in order: the effects before it are done
}

void inspect_array_sharding(const array& x, const std::function<void(const sharding_ptr&)>& callback) {
  if (!callback)
    throw value_error("inspect_array_sharding: the callback is empty");
  callback(x.sharding()); // a tracer's sharding is known while its function is traced
}

} // namespace am
