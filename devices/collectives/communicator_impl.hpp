/// The state of one rank of an am::communicator and how it runs operations: numbers them, hands
/// them to its worker, checks them against the peers, waits for them and breaks the communicator
/// when one fails. communicator_impl.cpp runs the operations, communicator_checks.cpp holds the
/// participants' checks against each other; communicator.cpp checks the caller's arguments.
/// Internal.
#pragma once

#include "actormesh/devices/collectives/communicator.hpp"
#include "devices/collectives/communicator_operation.hpp"
#include "devices/collectives/gloo_engine.hpp"
#include "devices/collectives/mesh_collectives.hpp"
#include "devices/collectives/serial_worker.hpp"
#include "devices/collectives/shm_mesh.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace am {

namespace detail {
class collective_job;
} // namespace detail

/// One rank of a communicator: what it was made with, its sequences' steps, whether it broke, and
/// the Gloo engine, shared-memory mesh and worker thread its operations run on.
struct communicator::impl {
  using clock = std::chrono::steady_clock;        ///< deadlines
  using milliseconds = std::chrono::milliseconds; ///< timeouts and time left

  /// Rank `r` of the communicator `n` over `procs`; nothing is connected until create().
  impl(detail::cluster_services& c, std::vector<int> procs, std::string n, std::string address,
       milliseconds t, int r)
      : cluster(c), processes(std::move(procs)), name(std::move(n)), bind_address(std::move(address)),
        timeout(t), rank(r), worker("am-coll-" + name) {}

  detail::cluster_services& cluster; ///< the process's cluster: store, liveness, creation's check
  const std::vector<int> processes;  ///< the participants' process indices, by rank
  const std::string name;            ///< the communicator's name (prefixes its rendezvous keys)
  const std::string bind_address;    ///< the interface Gloo binds
  const milliseconds timeout;        ///< an operation's timeout unless the caller gives one
  const int rank;                    ///< this process's rank

  mutable std::mutex mutex; ///< guards what follows, and orders steps with the worker's queue
  std::uint64_t steps = 0;  ///< the collectives numbered so far
  std::map<std::pair<int, int>, std::uint64_t> p2p_steps; ///< (from rank, to rank) -> next step
  std::string broken_reason;                              ///< why it broke (the first reason)
  std::atomic<bool> broken{false};                        ///< whether it broke; read without the lock
  std::unique_ptr<detail::gloo_engine> engine; ///< written by the worker (creation), aborted by anyone
  /// The shared-memory mesh the checks travel over when every rank runs on this machine (null
  /// otherwise: they travel over Gloo). Written by the worker at creation, aborted by anyone.
  std::unique_ptr<detail::shm_mesh> mesh;
  /// The worker's: the receives of the next collective's fingerprints, posted before the current
  /// one's record was sent (gloo_engine::post_fingerprints), and that collective's step. Goes
  /// before the engine.
  std::shared_ptr<void> next_fingerprints;
  std::uint64_t next_fingerprints_step = 0; ///< see next_fingerprints

  /// Operations queued on the worker and not yet finished; an agreement running on its caller's
  /// thread (the worker's next operation waits for `ran_here`). Guarded by `mutex`.
  std::size_t queued = 0;
  bool running_here = false;        ///< see queued
  std::condition_variable ran_here; ///< see queued

  detail::serial_worker worker; ///< runs the operations; declared last: joined before the engine goes

  /// This rank's process index in the cluster.
  int process() const { return processes[rank]; }

  /// Every rank but this one.
  std::vector<int> other_ranks() const;

  /// How errors name the operation `signature`, step `step` of the sequence `check_id`, on this rank.
  std::string where(const std::string& signature, const std::string& check_id, std::uint64_t step) const;

  /// An operation's timeout: `t` when given (refused unless positive), else the communicator's.
  milliseconds timeout_of(const timeout_type& t) const;

  /// Throws the error that says the communicator is broken, and why, if it is.
  void throw_if_broken() const;

  /// Marks the communicator broken (the first reason stays) and closes Gloo's connections, waking
  /// the worker if it waits in Gloo and failing peers that wait on this rank.
  void break_with(const std::string& reason);

  // communicator_impl.cpp: running an operation.

  /// A collective over every rank: numbered in the communicator's own sequence.
  /// `move(engine, tag, time left)`; the tag is the step, which keeps Gloo's messages of different
  /// steps apart.
  using mover = std::function<void(detail::gloo_engine&, std::uint32_t, milliseconds)>;

  /// `prepare(engine, tag)`, when given, runs on the worker before the cluster's check.
  using preparer = std::function<void(detail::gloo_engine&, std::uint32_t)>;

  /// How a collective too large to be carried moves over the shared-memory mesh, its ranks reading
  /// each other's memory (mesh_collectives.hpp): `direct(mesh, step, deadline)`.
  using direct_mover =
    std::function<detail::mesh_collective_outcome(detail::shm_mesh&, std::uint64_t, clock::time_point)>;

  /// Runs the collective `kind` over every rank (see mover and preparer).
  /// `carry`, when given and the mesh is there, describes the operation's bytes so that they
  /// travel with its fingerprints (a small collective; then neither `move` nor `prepare` runs).
  /// `direct`, when given and the mesh is there (and `carry` is not), moves the bytes instead of
  /// Gloo unless the ranks may not read each other's memory (then Gloo moves this operation and,
  /// through reads_refused, every later one, on every rank alike).
  void run_collective(const detail::operation_kind& kind, mover move, const timeout_type& t,
                      preparer prepare = {}, const std::function<detail::carried_bytes()>& carry = {},
                      direct_mover direct = {});

  /// The worker's: set once a collective over the mesh found that some rank may not read its
  /// peers' memory (every rank sets it at the same step).
  bool reads_refused = false;

  /// Whether a collective of `bytes` per rank travels with its check over the mesh.
  bool carries(std::size_t bytes) const { return mesh && bytes <= detail::carry_limit / processes.size(); }

  /// Sets how the check's errors name `op` (operation::check_what).
  static void name_for_check(detail::operation& op);

  /// How a send/recv's bytes move over the shared-memory mesh: `move(mesh, lane, step, deadline)`
  /// (mesh_transfer.hpp), the lane and step being the pair's fingerprints'.
  using mesh_mover = std::function<void(detail::shm_mesh&, std::uint8_t, std::uint64_t, clock::time_point)>;

  /// A send/recv between this rank and `peer`: numbered in the sequence of (from, to). Its bytes
  /// move over the mesh when there is one (`over_mesh`: one copy between the processes), else
  /// over Gloo (`move`).
  void run_p2p(int from, int to, const detail::operation_kind& kind, mover move, mesh_mover over_mesh,
               const timeout_type& t);

  /// Numbers the operation (`make()`, under the lock) and queues it under the same lock, so steps
  /// follow the worker's order, then waits for it. An agreement (`may_run_here`: no bytes to move)
  /// runs on the calling thread instead when the checks travel over the shared-memory mesh and
  /// nothing is queued before it: no hand-off to the worker and back (operations numbered while it
  /// runs queue behind it; the worker waits for it to end). Defined in communicator_impl.cpp, the
  /// only user.
  template <class Make>
  void submit_and_wait(milliseconds limit, bool may_run_here, Make make);

  /// An agreement on the calling thread: its check over the mesh, asking the cluster meanwhile
  /// whether the participants live (as await does for the worker's operations).
  void run_here(const detail::operation& op, clock::time_point deadline);

  /// A failure of `op`: recorded, the flight recorder written out (the error then says where), and
  /// the communicator broken with the error's message. Returns the error to report.
  std::exception_ptr fail(const detail::operation& op, std::exception_ptr error);

  /// Worker side: the cluster's check, then the bytes.
  void execute(detail::collective_job& job, const detail::operation& op, clock::time_point deadline);

  /// The error that says the communicator is broken (throw_if_broken's).
  std::exception_ptr broken_error() const;

  /// Caller side: waits for the worker, asking the cluster whether the participants live; gives
  /// up on a failed process or past the deadline, never while the worker may still use the
  /// caller's buffers.
  void await(detail::collective_job& job, const detail::operation& op, clock::time_point deadline,
             milliseconds limit);

  /// Refuses a name this process has already used in the cluster, then claims it.
  void claim_name();

  /// Step 0: every participant agrees on the list, then Gloo connects the full mesh.
  void create();

  // communicator_checks.cpp: the participants' checks against each other.

  /// The participants' check of `op` (not creation): every peer's fingerprint against this
  /// rank's, exchanged over the mesh. Returns the error to fail `op` with, or null when they agree.
  /// A peer whose fingerprint has not come by this rank's deadline is named as not arrived; a
  /// transport failure meanwhile is explained as one of the bytes (a failed process, or a peer that
  /// gave up at its own deadline).
  /// `landed` receives the bytes of a carried collective (operation::land), by rank.
  std::exception_ptr check_with_peers(const detail::operation& op, clock::time_point deadline,
                                      std::vector<std::vector<std::byte>>* landed);

  /// The ranks taking part in `op`'s check, this one among them, ascending.
  std::vector<int> group_of(const detail::operation& op) const;

  /// The desync error when the records of `group` (in its order) differ, or null.
  std::exception_ptr judge(const detail::operation& op, const std::vector<int>& group,
                           const std::vector<std::byte>& records);

  /// This rank's time for `op`'s check ran out and the processes `missing` never came: they are
  /// the cause, unless one of them has failed (a peer that gave up on this step first, and
  /// stopped, is not). The verdict goes to the store, and to the peers over the mesh, so that they
  /// and a latecomer report the same.
  std::exception_ptr name_the_missing(const detail::operation& op, const std::vector<int>& missing);

  /// A transport failure of `op`'s check while the records of the processes `missing` had not
  /// come: explain_failure's answer, except that one that reached this rank's deadline with the
  /// peers alive names them as not arrived (name_the_missing), as this rank's own timeout would.
  std::exception_ptr explain_with_missing(std::exception_ptr error, const detail::operation& op,
                                          clock::time_point deadline, const std::vector<int>& missing);

  /// `op`'s check over the shared-memory mesh (fingerprint_dissemination.hpp).
  /// `idle`, when given, runs every participant_liveness_poll while it waits.
  /// `landed` receives the payloads of a carried collective, by rank.
  std::exception_ptr check_over_mesh(const detail::operation& op, clock::time_point deadline,
                                     const std::function<void()>& idle,
                                     std::vector<std::vector<std::byte>>* landed);

  /// The store key under which the participants that timed out in `op`'s check say who had not
  /// arrived, so a latecomer whose peers have closed their connections reports the same.
  std::string verdict_key(const detail::operation& op) const;

  /// Publishes `text` as `op`'s verdict (best effort: the error stands without it).
  void publish_verdict(const detail::operation& op, const std::string& text);

  /// A verdict on `op` that a peer published before closing, waited for within verdict_wait (the
  /// peer sets it before it closes) and the time left; nullopt when there is none.
  std::optional<std::string> verdict_of(const detail::operation& op, clock::time_point deadline);

  /// Whether `error` holds an E. Here, not in a source, because both communicator_impl.cpp and
  /// communicator_checks.cpp ask.
  template <class E>
  static bool holds(const std::exception_ptr& error) {
    try {
      std::rethrow_exception(error);
    } catch (const E&) {
      return true;
    } catch (...) {
      return false;
    }
  }

  /// An error of `op`'s check, prefixed with where it happened unless `op` says otherwise.
  static std::exception_ptr in_check_context(const detail::operation& op, std::exception_ptr error);

  /// Before `op`'s record goes out, posts the receives of the next collective's fingerprints.
  void post_next_fingerprints(const detail::operation& op);

  /// A failure while the bytes moved, attributed to a failed process when the cluster knows one:
  /// a peer that died shows up here as a closed connection before the cluster reports it, so a
  /// connection failure waits up to attribution_window for the cluster. A connection that a peer
  /// closed at the deadline is a timeout (Gloo closes every connection of a rank that timed out).
  std::exception_ptr explain_failure(std::exception_ptr error, const detail::operation& op,
                                     clock::time_point deadline);
};

} // namespace am
