#include "actormesh/colocated/cpu_devices.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/runtime.hpp"

#include <algorithm>
#include <map>

namespace am {

namespace {

/// Every CPU device of the cluster, by process, in local-ordinal order; empty when there is none.
std::map<int, std::vector<device>> cpu_devices_by_process() {
  std::map<int, std::vector<device>> by_process;
  std::vector<device> cpus;
  try {
    cpus = devices(platform::cpu);
  } catch (const runtime_error&) {
    return by_process; // "Backend 'cpu' failed to initialize": no CPU device at all
  }
  for (auto& d : cpus)
    by_process[d.process_index].push_back(d);
  for (auto& [process, list] : by_process)
    std::sort(list.begin(), list.end(),
              [](const device& a, const device& b) { return a.local_ordinal < b.local_ordinal; });
  return by_process;
}

} // namespace

std::vector<device> colocated_cpu_devices(const std::vector<device>& devices) {
  auto by_process = cpu_devices_by_process();
  if (by_process.empty())
    throw value_error("No CPU devices found");
  std::vector<device> out;
  out.reserve(devices.size());
  for (auto& d : devices) {
    if (d.platform == platform::cpu) {
      out.push_back(d);
      continue;
    }
    auto it = by_process.find(d.process_index);
    if (it == by_process.end())
      throw value_error("Device " + to_string(d) + " has no colocated devices");
    if (d.local_ordinal < 0 || static_cast<std::size_t>(d.local_ordinal) >= it->second.size())
      throw value_error("Process " + std::to_string(d.process_index) + " does not have enough local CPU devices");
    out.push_back(it->second[static_cast<std::size_t>(d.local_ordinal)]);
  }
  return out;
}

mesh colocated_cpu_devices(const mesh& m) {
  auto cpus = colocated_cpu_devices(m.flat_devices());
  return mesh(device_grid(m.axis_sizes(), std::move(cpus)), m.axis_names());
}

} // namespace am
