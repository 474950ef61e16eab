/// The cluster client: this process's side of the mesh supervisor. An actor joins, sends
/// heartbeats, receives answers and failure notices; user threads make blocking requests through
/// the cluster_services interface and wait on futures with timeouts (never a scoped_actor). When the
/// coordinator is lost (down message, or no heartbeat answer within the heartbeat timeout) every
/// waiting request fails at once with am::process_failure_error. Internal.
#pragma once

#include "actors/cluster_services.hpp"
#include "cluster/membership.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace am::detail {

struct client_shared;

/// How much longer than the supervisor's own deadline a user thread waits for its answer: the
/// supervisor names the missing processes, so its answer is the one users should see.
inline constexpr std::chrono::milliseconds answer_grace{5000};

/// How a client behaves.
struct client_config {
  std::string coordinator;                            ///< "host:port", for messages
  std::chrono::milliseconds heartbeat_interval{1000}; ///< zero: no heartbeats (local mode)
  std::chrono::milliseconds heartbeat_timeout{20000}; ///< silence of the coordinator that counts as loss
  std::chrono::milliseconds default_timeout{300000};  ///< barriers and collectives without one
  caf::actor call_server;                             ///< a worker's, registered right after the join
  std::string secret;                                 ///< the cluster's secret ("" when none)
  std::function<std::string()> answer_stats;          ///< as join_settings::answer_stats
};

/// One process's membership in a cluster. Thread-safe; every blocking call has a timeout.
class cluster_client final : public cluster_services {
public:
  /// Spawns the client actor in `system`, which sends `request` to `supervisor` at once.
  cluster_client(caf::actor_system& system, caf::actor supervisor, join_request request, client_config config);
  ~cluster_client() override;

  cluster_client(const cluster_client&) = delete;
  cluster_client& operator=(const cluster_client&) = delete;

  /// Waits for the directory (every process joined). Throws am::timeout_error naming the missing
  /// processes, am::value_error when this process was refused (version, index), or
  /// am::process_failure_error.
  const cluster_directory& wait_joined(std::chrono::milliseconds timeout);

  /// The directory; valid after wait_joined.
  const cluster_directory& directory() const noexcept;

  /// Tells the supervisor this process stops and waits (at most `timeout`) until every process
  /// has left or failed, so that no process goes while others may still talk to it. Returns false
  /// when the wait ended otherwise (timeout, coordinator lost); never throws.
  bool leave(std::chrono::milliseconds timeout) noexcept;

  /// Fails every request still waiting with am::runtime_error(`why`); later requests fail the
  /// same way. Called once the runtime's actors are gone.
  void close(const std::string& why);

  /// The client actor (to stop it with the runtime).
  const caf::actor& actor() const noexcept { return actor_; }

  /// Why process `p` failed, if the supervisor said it did.
  std::optional<std::string> failure_of(int p) const override;

  /// True once the coordinator is gone (a worker's controller, in single-controller mode).
  bool coordinator_lost() const;

  /// On the controller: worker `p`'s call server (null for a process without one). Known before
  /// wait_joined returns.
  caf::actor call_server_of(int p) const;

  /// Runs `listener(process, notice)` on the client's thread for every process failure the
  /// supervisor reports from now on (short and non-blocking, as a future's callback).
  void on_process_failure(std::function<void(int, const std::string&)> listener);

  int process_index() const noexcept override;
  int process_count() const noexcept override;
  void kv_set(const std::string& key, const std::string& value) override;
  std::string kv_get(const std::string& key, std::chrono::milliseconds timeout) override;
  void kv_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  void check_collective(const std::string& communicator, std::uint64_t step, const std::vector<int>& participants,
                        const std::string& signature, std::chrono::milliseconds timeout) override;
  void barrier(const std::string& name, std::chrono::milliseconds timeout) override;
  void check_alive(const std::vector<int>& processes) const override;
  const std::string& secret() const noexcept override { return config_.secret; }

  /// The default timeout of barriers and collectives.
  std::chrono::milliseconds default_timeout() const noexcept { return config_.default_timeout; }

private:
  /// Sends a request built by `send` (given the request id) and waits for its answer: `timeout`
  /// plus `grace` (the supervisor enforces `timeout` itself and names who is missing, so the
  /// caller waits a little longer for that answer). Once this process is leaving, only the leave
  /// request itself (`while_leaving`) is sent; others fail.
  template <class Send>
  std::string request(Send&& send, std::chrono::milliseconds timeout, const char* what, bool while_leaving = false,
                      std::chrono::milliseconds grace = answer_grace);

  std::shared_ptr<client_shared> shared_;
  caf::actor supervisor_;
  caf::actor actor_;
  join_request request_;
  client_config config_;
};

} // namespace am::detail
