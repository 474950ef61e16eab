/// One rank of a full mesh of Gloo TCP connections and the data moves of every collective over it.
/// Internal to the communicator (devices/collectives/communicator*.cpp); keeps Gloo's headers in
/// its source.
#pragma once

#include "actormesh/actors/dtype.hpp"
#include "devices/collectives/collective_fingerprint.hpp"
#include "actormesh/devices/collectives/reduce_op.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace am::detail {

class cluster_services;

/// Gloo's side of a communicator. Every operation blocks its thread until the peers have done
/// their part or `timeout` passes; the operations are called by one thread at a time (the
/// communicator's worker), abort() from any thread. Gloo's exceptions come out as
/// am::timeout_error (Gloo timed out) or am::runtime_error (a connection failed), with Gloo's
/// message; after either, the mesh is closed and every later operation fails.
class gloo_engine {
public:
  using clock = std::chrono::steady_clock;
  using milliseconds = std::chrono::milliseconds;

  /// Throws am::value_error unless `address` resolves to an address a TCP socket can bind to here
  /// (Gloo itself does not check what getaddrinfo returns).
  static void check_bind_address(const std::string& address);

  /// Binds to `bind_address`, publishes this rank's addresses in the cluster's store under
  /// `store_prefix`, and connects to the `size - 1` other ranks, all before `deadline`.
  gloo_engine(cluster_services& cluster, const std::string& store_prefix, int rank, int size,
              const std::string& bind_address, clock::time_point deadline);
  ~gloo_engine();

  gloo_engine(const gloo_engine&) = delete;
  gloo_engine& operator=(const gloo_engine&) = delete;

  /// See am::communicator for the meaning of each operation; arguments are already validated.
  /// `tag` keeps the operation's Gloo messages apart from other operations'.
  void all_reduce(const void* input, void* output, std::size_t count, dtype t, reduce_op op, std::uint32_t tag,
                  milliseconds timeout);
  /// `posted`: the receives that post_all_gather posted for this operation, or null to post them here.
  void all_gather(const void* input, void* output, std::size_t count, dtype t, std::uint32_t tag,
                  milliseconds timeout, const std::shared_ptr<void>& posted = nullptr);
  /// Posts the receives of all_gather(..., output, count, t, tag, ...) before the cluster's check
  /// (which no rank passes before every rank has posted), so that no rank's block arrives before
  /// its receive: Gloo's loop thread spins on a socket whose data has no receive yet, which made
  /// small all-gathers several times slower (measured: doc/performance.md, "Multihost utilities and
  /// checkpoints"). The handle keeps the posted receives; dropping it without the all_gather leaves
  /// them to the engine's abort.
  std::shared_ptr<void> post_all_gather(void* output, std::size_t count, dtype t, std::uint32_t tag);
  void reduce_scatter(const void* input, void* output, std::size_t count, dtype t, reduce_op op,
                      std::uint32_t tag, milliseconds timeout);
  /// `posted`: what post_broadcast returned for this operation (its receive), or null.
  void broadcast(void* buffer, std::size_t count, dtype t, int root, std::uint32_t tag, milliseconds timeout,
                 const std::shared_ptr<void>& posted = nullptr);
  /// For a small broadcast (direct_broadcast_bytes or less), a non-root rank posts its receive
  /// from the root before the cluster's check, as post_all_gather does; null otherwise (larger
  /// broadcasts go through Gloo's tree).
  std::shared_ptr<void> post_broadcast(void* buffer, std::size_t count, dtype t, int root, std::uint32_t tag);
  /// The largest broadcast the root sends straight to every rank.
  static constexpr std::size_t direct_broadcast_bytes = 64 * 1024;
  void all_to_all(const void* input, void* output, std::size_t count, dtype t, std::uint32_t tag,
                  milliseconds timeout);
  void send(const void* data, std::size_t bytes, int peer, std::uint32_t tag, milliseconds timeout);
  void recv(void* data, std::size_t bytes, int peer, std::uint32_t tag, milliseconds timeout);

  /// The fingerprint sequences of a communicator: its collectives, and each direction of a
  /// send/recv pair (the lower rank's sends, the higher rank's sends).
  enum class fingerprint_lane : std::uint8_t { collectives = 0, to_higher_rank = 1, to_lower_rank = 2 };

  /// What an exchange of fingerprints brought: every rank's record in rank order (size()
  /// records; the bytes of a rank that is not a peer, or did not answer, are zero), and, when it
  /// failed, why and which peers' records had not come.
  struct fingerprint_exchange {
    std::vector<std::byte> records;
    std::vector<int> missing;   ///< peer ranks, ascending
    std::exception_ptr error;   ///< am::timeout_error (this rank's own timeout) or the transport's error
  };

  /// Posts the receives of the exchange on (`lane`, `tag`) with `peers` ahead of it (the receives
  /// of the next step, posted before this step's record is sent), so that a peer's record never arrives
  /// before its receive (post_all_gather says why that matters). Null for no peers.
  std::shared_ptr<void> post_fingerprints(const std::vector<int>& peers, fingerprint_lane lane, std::uint32_t tag);

  /// Sends this rank's record `mine` to every rank of `peers` and waits, within `timeout`, for
  /// theirs; `posted` is what post_fingerprints returned for the same exchange, or null. Never
  /// throws for a failure of the exchange: the result says it.
  fingerprint_exchange exchange_fingerprints(const fingerprint_record& mine, const std::vector<int>& peers,
                                             fingerprint_lane lane, std::uint32_t tag, milliseconds timeout,
                                             const std::shared_ptr<void>& posted = nullptr);

  /// Fails every Gloo wait in progress (and every later one) with `reason` and closes the
  /// connections, so the peers fail at once too. Thread-safe and idempotent. A receive whose
  /// bytes were already arriving is not woken by Gloo: it ends at its own timeout.
  void abort(const std::string& reason) noexcept;

private:
  struct state;
  std::unique_ptr<state> state_;
};

} // namespace am::detail
