/// What the floors above devices/ see of the running runtime: its options, the cluster's services,
/// which devices this process issues work to, and services that live as long as the runtime. No
/// CAF type appears here, so sharding/, parallel/, colocated/, multihost/ and observability/ compile
/// without CAF's headers; devices/detail/runtime_impl.hpp is the implementation, for devices/ only
/// (current_context() and the call guard are defined with it, in runtime_impl.cpp).
#pragma once

#include "actors/cluster_services.hpp"
#include "actors/detail/stop_signal.hpp"
#include "actormesh/actors/device_info.hpp"
#include "actormesh/devices/memory.hpp"
#include "actormesh/devices/options.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

namespace am::detail {

namespace remote {
class worker_hosts;
}

/// Where a device's work runs, seen from this process (its endpoint's kind answers).
enum class device_reach {
  here,          ///< one of this process's devices: its device actor runs here
  own_process,   ///< another process's device, driven by that process (a multi-controller cluster)
  through_link,  ///< another process's device that this process drives through a link to that
                 ///< process (the workers' devices, on a single-controller cluster's controller)
};

/// Names one per-runtime service of type `Service` (runtime_context::service). Declare one key per
/// service at namespace scope in the file that owns the service; the key's address is its identity,
/// so two services of one type (two step counters, say) are told apart by their keys, and the
/// lookup returns the service's own type without a cast.
template <class Service>
struct service_key {
  const char* name; ///< what the service is, in the error of a lookup once the runtime stops
};

/// The running runtime as the floors above devices/ use it. Thread-safe; obtained with
/// current_context() and held (as a shared_ptr) no longer than one call of the user's.
class runtime_context {
public:
  virtual ~runtime_context() = default;

  /// Held by a user thread while it issues a call into the runtime's actors (never while waiting
  /// for a result): stop() waits until no guard is held. Throws am::runtime_error once stopping.
  class call_guard {
  public:
    explicit call_guard(runtime_context& rt);
    ~call_guard();
    call_guard(const call_guard&) = delete;
    call_guard& operator=(const call_guard&) = delete;

  private:
    runtime_context& rt_;
  };

  /// The options the runtime runs with (process index and count, timeouts, mode).
  virtual const resolved_options& config() const noexcept = 0;

  /// This process's index in the cluster.
  int process_index() const noexcept { return config().process_id; }

  /// The cluster's key-value store, barriers and collective checks (a one-process cluster without
  /// networking when the runtime runs alone).
  virtual cluster_services& cluster() const noexcept = 0;

  /// True when this process issues the work of device `d`: its own devices, and every device on the
  /// controller of a single-controller cluster.
  virtual bool drives(const device& d) const noexcept = 0;

  /// Where the work of device `d` runs, seen from this process; checked as check_known(d).
  virtual device_reach reach(const device& d) const = 0;

  /// True when this process issues the work of every device of the cluster (the controller of a
  /// single-controller cluster, or a runtime of one process): no other process runs a plan's calls,
  /// pmap stages or collective checks beside it.
  virtual bool drives_every_device() const noexcept = 0;

  /// On the controller of a single-controller cluster, its workers' hosts (host calls, the shards
  /// they name); null otherwise. Used under a call_guard only.
  virtual remote::worker_hosts* worker_hosts() const noexcept = 0;

  /// Checks `d` against the cluster's device of that id (platform, process, ordinal), wherever it
  /// lives: a made-up or stale descriptor is refused with am::value_error.
  virtual void check_known(const device& d) const = 0;

  /// Every device of the cluster, CPU first, by id.
  virtual std::vector<device> all_devices() const = 0;

  /// The memory statistics of one of this process's devices; throws am::value_error for an unknown
  /// device or one without a statistics source.
  virtual am::memory_stats device_memory_stats(int device_id) const = 0;

  /// The runtime's service named by `key`, made by `make` (which returns a shared_ptr<Service>) on first use and destroyed when the
  /// runtime stops (newest first, after the distributed leave, before the actors go). Throws
  /// am::runtime_error once the runtime is stopping.
  template <class Service, class Make>
  std::shared_ptr<Service> service(const service_key<Service>& key, Make&& make) {
    return std::static_pointer_cast<Service>(
      service_slot(&key, key.name, [&make]() -> std::shared_ptr<void> { return make(); }));
  }

  /// Registers `drain`, which waits (until `deadline` at most) for work other processes may still
  /// need from this one: shards being sent, pmap stages. In a runtime of several processes, stop()
  /// runs every drain first, before it refuses any call, so a process that stops as soon as it has
  /// its own results does not take its peers' data with it (as JAX's shutdown barrier).
  virtual void add_stop_drain(std::function<void(std::chrono::steady_clock::time_point deadline)> drain) = 0;

protected:
  std::shared_ptr<stop_signal> stop_ = std::make_shared<stop_signal>(); ///< raised when stop() begins
  std::atomic<int> calls_in_progress_{0};                               ///< call_guards held now

  /// The service stored under `key` (the address of a service_key named `name`), made by `make`
  /// when absent.
  virtual std::shared_ptr<void> service_slot(const void* key, const char* name,
                                             const std::function<std::shared_ptr<void>()>& make) = 0;
};

/// The current runtime; throws am::runtime_error when none is running.
std::shared_ptr<runtime_context> current_context();

} // namespace am::detail
