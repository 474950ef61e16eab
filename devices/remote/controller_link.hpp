/// The controller's side of single-controller mode (doc/architecture.md "Single-controller
/// mode"): device calls for the workers' devices become requests to each worker's call server,
/// sent from the calling thread (one CAF connection per worker keeps each caller's order), and the
/// workers' answers resolve the futures. A worker that fails fails every future waiting on it at
/// once; later calls to it fail at once too. Internal.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "cluster/membership.hpp"
#include "actormesh/actors/device_info.hpp"
#include "actormesh/actors/future.hpp"
#include "actormesh/actors/program.hpp"
#include "devices/remote/remote_shard.hpp"
#include "devices/remote/worker_hosts.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace am::detail {
class runtime_impl;
}

namespace am::detail::remote {

struct request;
struct reply;

/// One controller's connection to its workers. Thread-safe.
class controller_link final : public worker_hosts, public std::enable_shared_from_this<controller_link> {
public:
  /// Reaches the workers of `rt`'s cluster (their call servers came with the join).
  static std::shared_ptr<controller_link> start(runtime_impl& rt);

  explicit controller_link(runtime_impl& rt);
  ~controller_link() override;

  controller_link(const controller_link&) = delete;
  controller_link& operator=(const controller_link&) = delete;

  /// Runs `code` on worker device `d` after this thread's earlier calls to `d`; inputs must be
  /// shards of that worker (am::value_error otherwise).
  std::vector<shard_future> execute(const device& d, std::shared_ptr<const program> code,
                                    const std::vector<shard_future>& inputs);

  /// Uploads and fetches of at least this many bytes go through the data plane (Gloo), several
  /// times faster than CAF messages for bulk bytes (measured: doc/performance.md, "Single-controller
  /// remote calls"); below it one CAF message is the quicker way.
  static constexpr std::size_t bulk_bytes = std::size_t{256} << 10;

  /// Copies host bytes into a new buffer on worker device `d`.
  shard_future upload(const device& d, std::vector<std::byte> bytes, value_type type);

  /// The bytes of a worker's shard, ordered after this thread's earlier calls to `d`.
  future<std::vector<std::byte>> fetch(const device& d, const shard_future& shard);

  /// Moves `value` (on device `from`) to device `to` of another process through the data plane;
  /// at least one of the two is a worker's. `tag` names the value for the engine's checks.
  shard_future move(const device& from, const shard_future& value, const device& to, const value_type& type,
                    std::uint32_t tag);

  host_call_issued host_call(int process, const std::string& service, std::string payload,
                             const std::vector<shard_future>& inputs,
                             const std::vector<std::pair<device, value_type>>& outputs) override;
  shard_future adopt(const device& d, std::uint64_t handle, const value_type& type) override;

  /// Tells every worker that the controller stops (their serve() returns), fails every future
  /// still waiting with am::runtime_error and stops the reply sink (the actor system joins it, so
  /// no handle to it may outlive this). Later calls fail with am::runtime_error.
  void stop();

  /// Process `p` failed (`why`): everything waiting on it fails with am::process_failure_error.
  void fail_process(int p, const std::string& why);

  /// Handles a reply from a worker (the reply sink's job).
  void complete(const std::string& bytes);

  void release(const location& where) noexcept override;

  /// Tells worker `process` that controller thread `caller` has ended, so that its lanes there go
  /// once idle (sent when a thread that sent requests ends; best effort, never throws).
  void retire_caller(int process, std::uint64_t caller) noexcept;


private:
  /// What waits for an answer.
  struct waiting {
    int process = 0;
    int device = 0;
    value_type type;
    std::shared_ptr<shard_state> shard;     ///< a shard's state (execute, upload, receive)
    promise<buffer_ref> shard_promise;
    promise<std::vector<std::byte>> bytes;  ///< a fetch's
    bool is_fetch = false;
    promise<host_outcome> host;             ///< a host call's end
    bool is_host = false;
  };

  /// A new shard of worker device `d` and its waiting entry (registered before the request goes).
  shard_future expect_shard(const device& d, const value_type& type, std::vector<std::uint64_t>& handles);

  /// `code` as it travels, encoded once per program object (a jitted function sends the same one
  /// with every call).
  std::string encoded(const std::shared_ptr<const program>& code);

  /// The data-plane tag of the next upload or fetch that goes through it.
  std::uint32_t bulk_tag() noexcept;

  /// A fetch of `where` through the data plane, once `shard` is computed (an error in it fails the
  /// result instead of leaving the receiving end waiting).
  future<std::vector<std::byte>> fetch_bulk(const device& d, const shard_future& shard, const location& where);

  /// Sends `q` to worker `process`'s call server; throws am::process_failure_error when that
  /// worker has failed and am::runtime_error once stopped.
  void send(int process, const request& q);

  /// send(), failing the request's waiting outputs (and rethrowing) when it cannot go.
  void send_or_fail(int process, const request& q);

  /// Throws if `process` cannot take requests (failed, stopped); under mutex_.
  void check_reachable(int process) const;

  /// The handle of input `f` on worker `process`; am::value_error when it lives elsewhere.
  std::uint64_t handle_on(int process, const shard_future& f, std::size_t position) const;

  /// Drops every entry of `process` (all when -1) and fails them with `error`.
  void fail_waiting(int process, const std::exception_ptr& error);

  /// Fails every entry of `dropped` (outside mutex_: callbacks may run).
  static void fail_entries(std::vector<waiting>& dropped, const std::exception_ptr& error);

  /// Drops the entries `ids` (a request that could not be sent) and fails them with `error`.
  void fail_waiting_ids(const std::vector<std::uint64_t>& ids, const std::exception_ptr& error);

  runtime_impl& rt_;
  cluster_directory directory_;
  std::vector<caf::actor> servers_; ///< by process; null for the controller
  caf::actor sink_;
  std::atomic<std::uint64_t> next_id_{1};
  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, waiting> waiting_;
  std::map<int, std::string> failed_;
  bool stopped_ = false;
  std::mutex transfer_order_; ///< pairs of transfer requests go out in one order to both ends
  std::atomic<std::uint32_t> next_bulk_tag_{0};
  /// Handles let go of, by worker, not yet told: they ride on the next request to that worker, or
  /// go in a release request of their own once there are many or they hold much memory.
  struct releases {
    std::vector<std::uint64_t> handles;
    std::uint64_t bytes = 0;
  };
  std::map<int, releases> released_; ///< under mutex_
  static constexpr std::size_t release_batch = 64;
  static constexpr std::uint64_t release_bytes = std::uint64_t{16} << 20;
  std::mutex encoded_mutex_;
  std::unordered_map<const program*, std::pair<std::weak_ptr<const program>, std::string>> encoded_;
};

} // namespace am::detail::remote
