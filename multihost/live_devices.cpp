#include "actormesh/multihost/live_devices.hpp"

#include "cluster/step_counters.hpp"
#include "actormesh/actors/errors.hpp"
#include "devices/runtime_context.hpp"
#include "actormesh/devices/runtime.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace am::multihost {

namespace {

using detail::step_counters;

/// Each process set's count of live_devices meetings so far.
const detail::service_key<step_counters> live_devices_steps{"live_devices"};

/// Who is alive among the processes of a live_devices call, as this process knows it.
class participants {
public:
  participants(detail::cluster_services& cluster, std::set<int> processes)
      : cluster_(cluster), processes_(std::move(processes)) {}

  /// Records a process as failed (it may be known from an error before the failure notice).
  void mark_failed(int p) {
    if (p >= 0)
      failed_.insert(p);
  }

  /// The processes not known to have failed, sorted.
  std::vector<int> alive() const {
    std::vector<int> out;
    for (int p : processes_)
      if (!failed_.count(p) && !cluster_.failure_of(p))
        out.push_back(p);
    return out;
  }

  /// The processes of `among` known to have failed.
  std::set<int> failed_among(const std::vector<int>& among) const {
    std::set<int> out;
    for (int p : among)
      if (failed_.count(p) || cluster_.failure_of(p))
        out.insert(p);
    return out;
  }

private:
  detail::cluster_services& cluster_;
  std::set<int> processes_;
  std::set<int> failed_;
};

std::string name_of(const std::vector<int>& procs) { return detail::communicator_name("am.live_devices/", procs); }

/// One meeting of `procs` ("enter" or "leave"); throws what the cluster's check throws.
void meet(detail::cluster_services& cluster, step_counters& steps, const std::vector<int>& procs, const char* what,
          std::chrono::milliseconds timeout) {
  const auto name = name_of(procs);
  cluster.check_collective(name, steps.take(name), procs, std::string("live_devices ") + what, timeout);
}

} // namespace

void live_devices(const std::vector<device>& devices, const std::function<void(const std::vector<device>&)>& body) {
  if (!is_running())
    throw runtime_error("Distributed JAX not initialized.");
  if (devices.empty())
    throw value_error("No devices provided.");
  auto rt = detail::current_context();
  auto& cluster = rt->cluster();
  const auto timeout = rt->config().collective_timeout;
  auto steps = rt->service(live_devices_steps, [] { return std::make_shared<step_counters>(); });
  std::set<int> procs;
  for (auto& d : devices)
    procs.insert(d.process_index);
  if (!procs.count(process_index()))
    throw value_error("Provided devices do not have any local devices.");
  participants who(cluster, procs);

  // Enter: meet the live processes; a process failing meanwhile is dropped and the meeting retried.
  std::vector<int> live_procs = who.alive();
  for (std::size_t attempt = 0;; ++attempt) {
    try {
      meet(cluster, *steps, live_procs, "enter", timeout);
      break;
    } catch (const process_failure_error& e) {
      if (attempt >= procs.size())
        throw;
      who.mark_failed(e.process());
      auto again = who.alive();
      if (again == live_procs) // the failure is not among them (the coordinator, this process): give up
        throw;
      live_procs = std::move(again);
    }
  }
  std::vector<device> live;
  for (auto& d : devices)
    if (std::binary_search(live_procs.begin(), live_procs.end(), d.process_index))
      live.push_back(d);
  std::sort(live.begin(), live.end(), [](const device& a, const device& b) { return a.id < b.id; });

  std::exception_ptr raised;
  try {
    body(live);
  } catch (...) {
    raised = std::current_exception();
  }

  // Leave: every live process meets again; whoever failed before all arrived fails the block everywhere.
  std::set<int> failed;
  std::string cause;
  try {
    meet(cluster, *steps, live_procs, "leave", timeout);
  } catch (const process_failure_error& e) {
    who.mark_failed(e.process());
    failed = who.failed_among(live_procs);
    cause = e.what();
    if (failed.empty())
      throw;
  }
  if (!failed.empty()) {
    std::vector<int> ids;
    std::string text;
    for (auto& d : live)
      if (failed.count(d.process_index)) {
        ids.push_back(d.id);
        text += (text.empty() ? "" : ", ") + to_string(d);
      }
    throw process_failure_error("Devices failed: {" + text + "}", *failed.begin(), std::move(ids));
  }
  if (raised)
    std::rethrow_exception(raised);
}

} // namespace am::multihost
