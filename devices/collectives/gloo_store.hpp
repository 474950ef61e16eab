/// Gloo's rendezvous store (gloo::rendezvous::Store) over the cluster's key-value store, so Gloo
/// meets its peers through the mesh supervisor and no second coordination service is needed.
/// Internal: only the collectives' sources include it (it brings in Gloo's headers).
#pragma once

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <string>
#include <vector>

namespace am::detail {

class cluster_services;

/// A gloo::rendezvous::Store whose keys live in `cluster` under `prefix` (one per communicator,
/// so communicators never collide). Every call waits at most until `deadline` (get waits for the
/// key to be set); the cluster's am::timeout_error and am::process_failure_error pass through.
/// Values are stored hex-encoded, so they are printable text whatever the control plane.
class gloo_store final : public gloo::rendezvous::Store {
public:
  using clock = std::chrono::steady_clock;

  gloo_store(cluster_services& cluster, std::string prefix, clock::time_point deadline);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

  /// The cluster key of Gloo's `key`.
  std::string cluster_key(const std::string& key) const;

private:
  std::chrono::milliseconds remaining() const;

  cluster_services& cluster_;
  std::string prefix_;
  clock::time_point deadline_;
};

} // namespace am::detail
