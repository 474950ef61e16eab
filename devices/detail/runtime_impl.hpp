/// Internal state of a running runtime: the CAF actor system, the device actors by global id, the
/// host actor, and the lane keys their callers number calls against.
#pragma once

#include "cluster/join.hpp"
#include "actors/detail/messages.hpp"
#include "actors/detail/stop_signal.hpp"
#include "actormesh/actors/device_info.hpp"
#include "devices/detail/actor_endpoint.hpp"
#include "devices/detail/buffer_pool.hpp"
#include "devices/detail/device_endpoint.hpp"
#include "devices/detail/exit_watch.hpp"
#include "devices/metrics_endpoint.hpp"
#include "actormesh/devices/discovery.hpp"
#include "actormesh/devices/memory.hpp"
#include "actormesh/devices/options.hpp"
#include "devices/runtime_context.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <atomic>
#include <cstdint>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace am::detail {

namespace remote {
class controller_link;
}

/// Everything a running runtime owns; the floors above devices/ see it as its runtime_context.
///
/// Stopping (stop()) happens on the thread that asks for it, never on a thread that happens to drop
/// the last reference: calls in progress on user threads hold a call_guard, and stop() waits for
/// them to leave before it tears the actor system down.
class runtime_impl final : public runtime_context {
public:
  /// Starts the actor system, spawns the device actors and the host actor.
  explicit runtime_impl(resolved_options opts);

  /// Stops the runtime if stop() was never called (only the memory is freed otherwise).
  ~runtime_impl() override;

  /// Stops the runtime; idempotent and thread-safe (a second caller waits for the first); throws
  /// am::runtime_error when called from one of the runtime's own host tasks. In order:
  /// new calls are refused; calls being issued on other threads finish issuing; every call still
  /// queued (in outboxes, mailboxes, or waiting for inputs) fails with am::runtime_error; the call
  /// each device is running finishes; then every actor has exited and the actor system is gone.
  void stop();

  const resolved_options& config() const noexcept override { return options_; }
  const gpu_report& gpus() const noexcept { return gpus_; }
  const caf::actor& host() const noexcept { return host_; }
  std::uint64_t host_lane_key() const noexcept { return host_lane_key_; }
  caf::actor_system& system() noexcept { return *system_; }

  /// This process's membership: the cluster client (barriers, the store, collective checks) and
  /// the directory. In local mode a one-process cluster without networking.
  cluster_client& cluster() const noexcept override { return *membership_.client; }

  /// On a single-controller cluster's controller: the link to the workers; null otherwise.
  remote::controller_link* workers() const noexcept { return workers_.get(); }

  bool drives(const device& d) const noexcept override {
    return d.process_index == options_.process_id || workers_ != nullptr;
  }
  device_reach reach(const device& d) const override;
  bool drives_every_device() const noexcept override { return workers_ != nullptr || options_.num_processes <= 1; }
  remote::worker_hosts* worker_hosts() const noexcept override;

  /// A worker's call server starts taking the controller's requests (called once this runtime is
  /// the current one: the work they run, colocated bodies too, looks the runtime up).
  void open_for_calls();

  /// Watches a detached actor this runtime spawned (right after spawning it, before its handle
  /// goes anywhere): stop() and a failed start wait until it has finished exiting before the actor
  /// system goes (devices/detail/exit_watch.hpp says why).
  void watch_exit(const caf::actor& detached) { exits_.watch(detached); }

  /// A worker's service loop: returns when the controller stops the cluster; throws
  /// am::process_failure_error when the controller is lost and am::runtime_error when this
  /// runtime stops meanwhile or is not a worker.
  void serve();

  /// The local interface address the data plane (collective engines) binds: the listen address
  /// when one was given, else the address this host uses to reach the coordinator (127.0.0.1 for
  /// a loopback coordinator and in local mode).
  const std::string& data_plane_address() const noexcept { return data_plane_address_; }

  void add_stop_drain(std::function<void(std::chrono::steady_clock::time_point deadline)> drain) override;

  /// Remembers a caller's outbox to one of this runtime's devices, to close it when the runtime
  /// stops: calls still queued there then fail instead of waiting forever.
  void register_outbox(const std::shared_ptr<device_outbox>& box);

  /// The endpoint of a device id, whatever its kind; throws am::value_error for an unknown id.
  const device_endpoint& endpoint(int device_id) const;

  /// The endpoint this process issues `d`'s calls to, checked as check_known(d) (a made-up or stale
  /// descriptor is refused with am::value_error). Its kind refuses what this process cannot do.
  const device_endpoint& route(const device& d) const;

  /// The endpoint of `d`, one of this process's own devices, checked as route(d); am::runtime_error
  /// for another process's device.
  const actor_endpoint& own_endpoint(const device& d) const;

  void check_known(const device& d) const override;
  std::vector<device> all_devices() const override;

  /// The default platform: cuda when GPUs are in use, else cpu.
  platform default_platform() const noexcept;

  /// Where a device's memory statistics come from (callable from any thread).
  using memory_stats_source = std::function<am::memory_stats()>;

  am::memory_stats device_memory_stats(int device_id) const override;

  /// The pool of CPU device `device_id` (null for other devices).
  std::shared_ptr<buffer_pool> cpu_pool(int device_id) const;

protected:
  std::shared_ptr<void> service_slot(const void* key, const char* name,
                                     const std::function<std::shared_ptr<void>()>& make) override;

private:
  /// The constructor's part after the actor system exists: joins the cluster and spawns the call
  /// server, device and host actors (and the controller's links to its workers).
  void start_actors(join_settings& join);

  /// Sends an exit to every actor this runtime spawned (those spawned so far, when a start failed),
  /// so that the actor system, which waits for them all, can be destroyed.
  void exit_spawned_actors();

  /// Runs the stop drains (add_stop_drain) in a multi-controller runtime of several processes,
  /// bounded by the shutdown timeout.
  void drain_for_peers();

  resolved_options options_;
  gpu_report gpus_;
  caf::actor_system_config caf_config_;
  std::unique_ptr<caf::actor_system> system_;
  std::vector<std::unique_ptr<device_endpoint>> endpoints_; ///< by device id
  std::vector<actor_endpoint*> own_endpoints_;              ///< by device id; null for other processes'

  std::mutex outboxes_mutex_;
  std::vector<std::weak_ptr<device_outbox>> outboxes_;
  std::vector<std::shared_ptr<buffer_pool>> cpu_pools_; ///< by device id; null for non-CPU devices
  /// By device id. CPU devices read their pool. CUDA devices: the hook is `cuda_memory_stats` of
  /// devices/cuda/cuda_memory.hpp, installed where the CUDA device actors are spawned; an empty
  /// source means "memory statistics for CUDA devices are not available in this build".
  std::vector<memory_stats_source> memory_sources_;
  caf::actor host_;
  std::uint64_t host_lane_key_ = 0;
  std::shared_ptr<remote::controller_link> workers_; ///< the controller's, in single-controller mode
  caf::actor call_server_;                           ///< a worker's
  promise<void> controller_stopped_;                 ///< a worker's: resolved when the controller stops
  cluster_membership membership_;
  exit_watch exits_; ///< the detached actors spawned for this runtime (exit_watch.hpp)
  std::string data_plane_address_ = "127.0.0.1";
  /// The Prometheus endpoint (metrics_port), started once the devices are up and stopped first.
  std::unique_ptr<metrics_endpoint> metrics_;
  std::mutex services_mutex_;
  std::vector<std::pair<const void*, std::shared_ptr<void>>> services_; ///< by service_key, in creation order
  std::mutex stop_drains_mutex_; ///< its own: services register drains while service() holds services_mutex_
  std::vector<std::function<void(std::chrono::steady_clock::time_point)>> stop_drains_;
  std::mutex stop_mutex_;                 ///< serializes stop()
  bool stopped_ = false;                  ///< under stop_mutex_
};

/// The runtime behind a context: every runtime_context is a runtime_impl (devices/ passes the one
/// it was handed by a floor above on to its own parts this way).
inline runtime_impl& impl_of(runtime_context& context) { return static_cast<runtime_impl&>(context); }

/// The current runtime; throws am::runtime_error when none is running.
std::shared_ptr<runtime_impl> current_runtime();

/// Makes `impl` current; throws when another one is current.
void set_current_runtime(std::shared_ptr<runtime_impl> impl);

/// Clears the current runtime if it is `impl` (a runtime stopping twice, or after another one
/// started, leaves the current one alone).
void clear_current_runtime(const runtime_impl* impl);

} // namespace am::detail
