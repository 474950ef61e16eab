#include "colocated/detail/call_devices.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/runtime.hpp"
#include "sharding/detail/addressable.hpp"

#include <algorithm>

namespace am::detail {

std::vector<int> device_id_set(const std::vector<device>& devices) {
  std::vector<int> ids;
  for (auto& d : devices)
    ids.push_back(d.id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::string device_list_text(const std::vector<device>& devices) {
  std::string out = "[";
  for (std::size_t k = 0; k < devices.size(); ++k)
    out += (k ? ", " : "") + to_string(devices[k]);
  return out + "]";
}

std::vector<device> call_devices(const std::vector<array>& inputs, const std::optional<std::vector<device>>& specialized) {
  std::vector<std::vector<device>> lists; // distinct, in order of first use
  for (auto& a : inputs) {
    auto& list = a.sharding()->device_assignment();
    if (std::find(lists.begin(), lists.end(), list) == lists.end())
      lists.push_back(list);
  }
  if (lists.size() > 1) {
    std::string text = "{";
    for (std::size_t k = 0; k < lists.size(); ++k)
      text += (k ? ", " : "") + device_list_text(lists[k]);
    throw value_error("All arguments must use the same device list, but got multiple device lists: " + text + "}.");
  }
  if (specialized) {
    if (!lists.empty() && device_id_set(lists[0]) != device_id_set(*specialized))
      throw value_error("colocated_python: the arguments are on " + device_list_text(lists[0])
                        + " but the function was specialized with devices " + device_list_text(*specialized));
    // The same devices in another order: the call follows its inputs' order, as JAX's does.
    if (!lists.empty())
      return lists[0];
    if (!specialized->empty())
      return *specialized;
  } else if (!lists.empty()) {
    return lists[0];
  }
  throw value_error("No devices found. colocated_python function without input arguments must be first "
                    "specialized with devices.");
}

void check_runs_here(const std::vector<device>& devices) {
  int here = process_index();
  for (auto& d : devices) {
    if (d.platform != platform::cpu)
      throw value_error("colocated_python runs on CPU devices, but got " + to_string(d)
                        + ": use colocated_cpu_devices() to find the CPU devices of its host");
    if (d.process_index != here && !drives_every_device())
      throw runtime_error("colocated_python: " + to_string(d) + " belongs to process "
                          + std::to_string(d.process_index) + ", not to this one (" + std::to_string(here)
                          + "); only a single-controller cluster's controller runs colocated code in other "
                            "processes (its workers)");
  }
}

void check_output_devices(const std::vector<array>& outputs, const std::vector<device>& devices) {
  auto want = device_id_set(devices);
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    auto& got = outputs[k].sharding()->device_assignment();
    if (device_id_set(got) != want)
      throw value_error("colocated_python: inputs and outputs must use the same devices, but the call runs on "
                        + device_list_text(devices) + " and output " + std::to_string(k) + " is on "
                        + device_list_text(got));
  }
}

} // namespace am::detail
