#include "devices/collectives/communicator.hpp"
#include "devices/collectives/communicator_waits.hpp"

#include "actors/cluster_services.hpp"
#include "actors/errors.hpp"
#include "cluster/membership.hpp"
#include "cluster/rendezvous_text.hpp"
#include "devices/collectives/collective_errors.hpp"
#include "devices/collectives/collective_fingerprint.hpp"
#include "devices/collectives/collective_job.hpp"
#include "devices/collectives/fingerprint_dissemination.hpp"
#include "devices/collectives/gloo_engine.hpp"
#include "devices/collectives/reduce_kernels.hpp"
#include "devices/collectives/serial_worker.hpp"
#include "devices/collectives/shm_mesh.hpp"
#include "observability/flight_recorder.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <mutex>
#include <thread>
#include <utility>

namespace am {

namespace {

using clock = std::chrono::steady_clock;
using milliseconds = std::chrono::milliseconds;

/// How long past an operation's deadline the caller waits for the worker's own (more precise)
/// timeout error before it gives up on the worker.
constexpr milliseconds answer_grace{2000};
/// How long a transport failure waits for the cluster to name a failed process.
constexpr milliseconds attribution_window{1000};
/// How long a participant whose peers closed their connections during the check waits for their
/// verdict in the store (they publish it before they close, so it is there or on its way).
constexpr milliseconds verdict_wait{300};
/// Longest communicator name.
constexpr std::size_t max_name_length = 200;

std::string ms_text(milliseconds t) {
  return std::to_string(t.count()) + " ms";
}

void check_name(const std::string& name) {
  if (name.empty() || name.size() > max_name_length)
    throw value_error("A communicator name has 1 to " + std::to_string(max_name_length) + " characters, got "
                      + std::to_string(name.size()));
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f || c == '/')
      throw value_error("Communicator name '" + name
                        + "' has a '/' or a control character (names prefix the rendezvous keys)");
}

/// This process's rank in `processes`, after checking the list.
int rank_in(const std::vector<int>& processes, int me, int process_count) {
  if (processes.empty())
    throw value_error("A communicator needs at least one process, got an empty list");
  for (std::size_t i = 0; i < processes.size(); ++i) {
    if (processes[i] < 0 || processes[i] >= process_count)
      throw value_error("Process " + std::to_string(processes[i]) + " in " + detail::bracketed_list_text(processes)
                        + " is not a process of the cluster (0 to " + std::to_string(process_count - 1) + ")");
    if (i > 0 && processes[i] <= processes[i - 1])
      throw value_error("The processes of a communicator are sorted and distinct (ranks follow the list), got "
                        + detail::bracketed_list_text(processes));
  }
  auto it = std::find(processes.begin(), processes.end(), me);
  if (it == processes.end())
    throw value_error("This process (" + std::to_string(me) + ") is not in the communicator's processes "
                      + detail::bracketed_list_text(processes));
  return static_cast<int>(it - processes.begin());
}

/// `count` elements of `t` in bytes, refusing sizes that overflow; `copies` buffers of them.
std::size_t checked_bytes(std::size_t count, dtype t, std::size_t copies = 1) {
  const std::size_t element = size_of(t);
  if (element == 0)
    throw value_error("Unknown dtype code " + std::to_string(static_cast<int>(t)));
  if (count != 0 && (copies > std::numeric_limits<std::size_t>::max() / element / count))
    throw value_error(std::to_string(count) + " elements of " + std::string(name(t)) + " (x"
                      + std::to_string(copies) + ") overflow the size of a buffer");
  return count * element * copies;
}

void check_buffer(const void* p, std::size_t count, const char* what) {
  if (p == nullptr && count != 0)
    throw value_error(std::string(what) + " is null but holds " + std::to_string(count) + " elements");
}

/// What an operation is, as the flight recorder keeps it: its name ("all_gather"), dtype and count
/// (empty for none), and the rest of its signature (" root=0"). The signature is "name dtype[count]rest".
struct operation_kind {
  std::string name;
  std::string type_name;
  std::string shape;
  std::string rest;

  /// How the errors of an agreement (a barrier, communicator::agree) name it ("Barrier 'x'");
  /// empty for the other operations.
  std::string label;

  operation_kind(std::string n, am::dtype t, std::size_t count, std::string r = "")
      : name(std::move(n)), type_name(am::name(t)), shape("[" + std::to_string(count) + "]"), rest(std::move(r)) {}
  explicit operation_kind(std::string n) : name(std::move(n)) {}

  /// An agreement on `signature`, moving no bytes, whose errors name it `label`.
  static operation_kind agreement(const std::string& label, const std::string& signature) {
    operation_kind kind(signature);
    kind.label = label;
    return kind;
  }

  std::string signature() const {
    return type_name.empty() ? name + rest : name + " " + type_name + shape + rest;
  }
};

/// How an operation's participants check that they all issued it alike: after creation, by
/// exchanging fingerprints with each other (`peer_ranks` on `lane`); creation itself, before
/// there is a mesh to exchange them over, through the cluster.
struct fingerprint_check {
  bool by_cluster = true;                       ///< creation: the cluster checks it
  std::vector<int> peer_ranks;                  ///< the other participants' ranks
  detail::gloo_engine::fingerprint_lane lane{}; ///< which sequence's fingerprints
};

/// One operation: how it is checked and how its bytes move.
struct operation {
  operation_kind kind;              ///< what it is (the flight recorder's fields)
  std::string signature;            ///< what every participant must issue alike
  std::string check_id;             ///< the sequence it belongs to (communicator, or a send/recv pair)
  std::uint64_t step = 0;           ///< its number in that sequence
  std::vector<int> participants;    ///< process indices
  std::string where;                ///< how errors name it
  std::function<void(milliseconds)> move; ///< moves the bytes on the worker, within the time left
  fingerprint_check check = {};     ///< how the participants check it
  milliseconds limit{0};            ///< its timeout, for the errors
  std::uint64_t record = 0;         ///< its flight recorder entry
  std::function<void()> prepare = {}; ///< run on the worker before the check (may be empty)

  /// How the check's errors name it ("Collective 3 of communicator 'w'", "Barrier 'x'"), and
  /// whether they are prefixed with `where` (an agreement's are not: its `where` says it cannot
  /// complete, as the supervisor's barrier errors do).
  std::string check_what = {};
  bool check_errors_in_context = true;

  /// A small collective whose bytes travel with its fingerprints over the shared-memory mesh: what
  /// this rank carries and expects of each rank, and `land`, which puts the bytes of every rank
  /// (by rank) where the caller wants them. Empty `land`: the bytes go through Gloo (`move`).
  detail::dissemination_payload carried = {};
  std::function<void(const std::vector<std::vector<std::byte>>&)> land = {};
};

/// The most bytes (a rank's buffer times the ranks) a collective carries with its fingerprints over
/// the shared-memory mesh; larger ones go through Gloo (doc/performance.md).
constexpr std::size_t carry_limit = 256 * 1024;

/// What a small collective carries over the mesh (operation::carried and land), as its caller
/// describes it.
struct carried_bytes {
  detail::dissemination_payload payload;
  std::function<void(const std::vector<std::vector<std::byte>>&)> land;
};

/// Rank `r`'s bytes among what a carried collective brought (by rank), refusing bytes that did
/// not arrive whole (`bytes` expected; a peer's malformed message).
const std::vector<std::byte>& landed_bytes(const std::vector<std::vector<std::byte>>& landed, std::size_t r,
                                           std::size_t bytes, const std::vector<int>& processes) {
  if (r >= landed.size() || landed[r].size() != bytes)
    throw runtime_error("the bytes of process " + std::to_string(processes[r])
                        + " did not arrive whole over shared memory ("
                        + std::to_string(r < landed.size() ? landed[r].size() : 0) + " of " + std::to_string(bytes)
                        + " bytes)");
  return landed[r];
}

/// A copy of `bytes` bytes at `data`.
std::vector<std::byte> copy_of(const void* data, std::size_t bytes) {
  const auto* begin = static_cast<const std::byte*>(data);
  return bytes == 0 ? std::vector<std::byte>{} : std::vector<std::byte>(begin, begin + bytes);
}

} // namespace

struct communicator::impl {
  impl(detail::cluster_services& c, std::vector<int> procs, std::string n, std::string address, milliseconds t,
       int r)
      : cluster(c), processes(std::move(procs)), name(std::move(n)), bind_address(std::move(address)),
        timeout(t), rank(r), worker("am-coll-" + name) {}

  detail::cluster_services& cluster;
  const std::vector<int> processes;
  const std::string name;
  const std::string bind_address;
  const milliseconds timeout;
  const int rank;

  mutable std::mutex mutex; // guards what follows, and orders steps with the worker's queue
  std::uint64_t steps = 0;
  std::map<std::pair<int, int>, std::uint64_t> p2p_steps; // (from rank, to rank) -> next step
  std::string broken_reason;
  std::atomic<bool> broken{false};
  std::unique_ptr<detail::gloo_engine> engine; // written by the worker (creation), aborted by anyone
  /// The shared-memory mesh the checks travel over when every rank runs on this machine (null
  /// otherwise: they travel over Gloo). Written by the worker at creation, aborted by anyone.
  std::unique_ptr<detail::shm_mesh> mesh;
  /// The worker's: the receives of the next collective's fingerprints, posted before the current
  /// one's record was sent (gloo_engine::post_fingerprints), and that collective's step. Goes
  /// before the engine.
  std::shared_ptr<void> next_fingerprints;
  std::uint64_t next_fingerprints_step = 0;

  /// Operations queued on the worker and not yet finished; an agreement running on its caller's
  /// thread (the worker's next operation waits for `ran_here`). Guarded by `mutex`.
  std::size_t queued = 0;
  bool running_here = false;
  std::condition_variable ran_here;

  detail::serial_worker worker; // declared last: joined before the engine goes

  int process() const { return processes[rank]; }

  /// Every rank but this one.
  std::vector<int> other_ranks() const {
    std::vector<int> out;
    for (int r = 0; r < static_cast<int>(processes.size()); ++r)
      if (r != rank)
        out.push_back(r);
    return out;
  }

  std::string where(const std::string& signature, const std::string& check_id, std::uint64_t step) const {
    return signature + " (step " + std::to_string(step) + " of communicator '" + check_id + "', rank "
           + std::to_string(rank) + " of " + std::to_string(processes.size()) + ", process "
           + std::to_string(process()) + ")";
  }

  milliseconds timeout_of(const timeout_type& t) const {
    if (t && t->count() <= 0)
      throw value_error("A collective's timeout must be positive, got " + ms_text(*t));
    return t ? *t : timeout;
  }

  void throw_if_broken() const {
    if (!broken.load(std::memory_order_acquire))
      return;
    std::lock_guard<std::mutex> guard(mutex);
    throw runtime_error("Communicator '" + name + "' is broken and refuses further operations (" + broken_reason
                        + "); create a new communicator, with a new name, to go on");
  }

  /// Marks the communicator broken (the first reason stays) and closes Gloo's connections, waking
  /// the worker if it waits in Gloo and failing peers that wait on this rank.
  void break_with(const std::string& reason) {
    std::lock_guard<std::mutex> guard(mutex);
    if (broken.load(std::memory_order_relaxed))
      return;
    broken_reason = reason;
    broken.store(true, std::memory_order_release);
    if (engine)
      engine->abort("communicator '" + name + "' broke: " + reason);
    if (mesh)
      mesh->abort("communicator '" + name + "' broke: " + reason);
  }

  /// A collective over every rank: numbered in the communicator's own sequence.
  /// `move(engine, tag, time left)`; the tag is the step, which keeps Gloo's messages of different
  /// steps apart.
  using mover = std::function<void(detail::gloo_engine&, std::uint32_t, milliseconds)>;

  /// `prepare(engine, tag)`, when given, runs on the worker before the cluster's check.
  using preparer = std::function<void(detail::gloo_engine&, std::uint32_t)>;

  /// `carry`, when given and the mesh is there, describes the operation's bytes so that they
  /// travel with its fingerprints (a small collective; then neither `move` nor `prepare` runs).
  void run_collective(const operation_kind& kind, mover move, const timeout_type& t, preparer prepare = {},
                      const std::function<carried_bytes()>& carry = {}) {
    const milliseconds limit = timeout_of(t);
    throw_if_broken();
    const std::string signature = kind.signature();
    std::optional<carried_bytes> carried;
    if (carry && mesh)
      carried = carry(); // copies the caller's input now: a worker may send it after the caller gave up
    // An agreement moves no bytes and a carried collective moves them with its check: either may
    // run on this thread.
    const bool may_run_here = !kind.label.empty() || carried;
    submit_and_wait(limit, may_run_here, [&] {
      const std::uint64_t step = ++steps;
      const auto tag = static_cast<std::uint32_t>(step);
      operation op{kind, signature, name, step, processes, where(signature, name, step),
                   [this, move, tag](milliseconds left) { move(*engine, tag, left); },
                   {false, other_ranks(), detail::gloo_engine::fingerprint_lane::collectives}, limit};
      if (carried) {
        op.carried = std::move(carried->payload);
        op.land = std::move(carried->land);
      } else if (prepare)
        op.prepare = [this, prepare, tag] { prepare(*engine, tag); };
      name_for_check(op);
      return op;
    });
  }

  /// Whether a collective of `bytes` per rank travels with its check over the mesh.
  bool carries(std::size_t bytes) const {
    return mesh && bytes <= carry_limit / processes.size();
  }

  /// Sets how the check's errors name `op` (operation::check_what).
  static void name_for_check(operation& op) {
    if (!op.kind.label.empty()) {
      op.check_what = op.kind.label;
      op.where = op.check_what + " cannot complete";
      op.check_errors_in_context = false;
      return;
    }
    op.check_what = "Collective " + std::to_string(op.step) + " of communicator '" + op.check_id + "'";
  }

  /// A send/recv between this rank and `peer`: numbered in the sequence of (from, to).
  void run_p2p(int from, int to, const operation_kind& kind, mover move, const timeout_type& t) {
    const milliseconds limit = timeout_of(t);
    throw_if_broken();
    const std::string signature = kind.signature();
    const std::string id = name + "/p2p/" + std::to_string(processes[from]) + "->" + std::to_string(processes[to]);
    std::vector<int> pair{processes[from], processes[to]};
    std::sort(pair.begin(), pair.end());
    submit_and_wait(limit, false, [&] {
      const std::uint64_t step = p2p_steps[{from, to}]++;
      const auto lane = from < to ? detail::gloo_engine::fingerprint_lane::to_higher_rank
                                  : detail::gloo_engine::fingerprint_lane::to_lower_rank;
      operation op{kind, signature, id, step, pair, where(signature, id, step),
                   [this, move](milliseconds left) { move(*engine, 0, left); },
                   {false, {from == rank ? to : from}, lane}, limit};
      name_for_check(op);
      return op;
    });
  }

  /// Numbers the operation (`make()`, under the lock) and queues it under the same lock, so steps
  /// follow the worker's order, then waits for it. An agreement (`may_run_here`: no bytes to move)
  /// runs on the calling thread instead when the checks travel over the shared-memory mesh and
  /// nothing is queued before it: no hand-off to the worker and back (operations numbered while it
  /// runs queue behind it; the worker waits for it to end).
  template <class Make>
  void submit_and_wait(milliseconds limit, bool may_run_here, Make make) {
    const auto deadline = clock::now() + limit;
    auto job = std::make_shared<detail::collective_job>();
    std::shared_ptr<operation> op;
    bool here = false;
    {
      std::lock_guard<std::mutex> guard(mutex);
      op = std::make_shared<operation>(make());
      op->record = observability::process_flight_recorder().issue(op->check_id, op->step, op->kind.name,
                                                                  op->kind.type_name, op->kind.shape, op->signature,
                                                                  op->participants);
      here = may_run_here && mesh && queued == 0 && !running_here;
      if (here)
        running_here = true;
      else {
        ++queued;
        worker.post([this, job, op, deadline] {
          {
            std::unique_lock<std::mutex> lock(mutex);
            ran_here.wait(lock, [this] { return !running_here; });
          }
          execute(*job, *op, deadline);
          std::lock_guard<std::mutex> done(mutex);
          --queued;
        });
      }
    }
    if (here)
      run_here(*op, deadline);
    else
      await(*job, *op, deadline, limit);
    observability::process_flight_recorder().mark(op->record, observability::op_state::completed);
  }

  /// An agreement on the calling thread: its check over the mesh, asking the cluster meanwhile
  /// whether the participants live (as await does for the worker's operations).
  void run_here(const operation& op, clock::time_point deadline) {
    struct done_here {
      impl& self;
      ~done_here() {
        std::lock_guard<std::mutex> guard(self.mutex);
        self.running_here = false;
        self.ran_here.notify_all();
      }
    } done{*this};
    if (broken.load(std::memory_order_acquire))
      std::rethrow_exception(broken_error());
    std::vector<std::vector<std::byte>> landed;
    auto failure = check_over_mesh(op, deadline, [&] { cluster.check_alive(op.participants); }, &landed);
    if (!failure && op.land) {
      try {
        op.land(landed);
      } catch (...) {
        failure = detail::with_context(std::current_exception(), op.where);
      }
    }
    if (failure && holds<process_failure_error>(failure))
      if (auto verdict = verdict_of(op, clock::now())) // a peer gave up first, said why, and stopped
        failure = in_check_context(op, std::make_exception_ptr(timeout_error(*verdict)));
    if (failure)
      std::rethrow_exception(broken.load(std::memory_order_acquire) ? failure : fail(op, failure));
    observability::process_flight_recorder().mark(op.record, observability::op_state::checked);
  }

  /// A failure of `op`: recorded, the flight recorder written out (the error then says where), and
  /// the communicator broken with the error's message. Returns the error to report.
  std::exception_ptr fail(const operation& op, std::exception_ptr error) {
    const std::string message = detail::message_of(error);
    observability::process_flight_recorder().mark(op.record, observability::op_state::failed, message);
    const std::string path = observability::dump_flight_recorder(process(), message);
    error = detail::with_note(error, observability::flight_recorder_note(path));
    break_with(message);
    return error;
  }

  /// Worker side: the cluster's check, then the bytes.
  void execute(detail::collective_job& job, const operation& op, clock::time_point deadline) {
    std::vector<std::vector<std::byte>> landed; // a carried collective's bytes, by rank
    if (!job.begin_check())
      return job.finish(nullptr); // abandoned: the caller has reported already
    if (broken.load(std::memory_order_acquire))
      return job.finish(broken_error());
    if (op.prepare) {
      try {
        op.prepare(); // a pair a dead peer closed fails here: attributed like a failure of the bytes
      } catch (...) {
        return job.finish(fail(op, explain_failure(std::current_exception(), op, deadline)));
      }
    }
    if (op.check.by_cluster) { // creation: no mesh yet
      try {
        cluster.check_collective(op.check_id, op.step, op.participants, op.signature, detail::time_left(deadline));
      } catch (...) {
        return job.finish(fail(op, detail::with_context(std::current_exception(), op.where)));
      }
    } else if (auto failure = check_with_peers(op, deadline, &landed)) {
      // A caller that gave up has broken the communicator and reported already.
      return job.finish(broken.load(std::memory_order_acquire) ? failure : fail(op, failure));
    }
    observability::process_flight_recorder().mark(op.record, observability::op_state::checked);
    if (!job.begin_move())
      return job.finish(nullptr);
    if (broken.load(std::memory_order_acquire))
      return job.finish(broken_error());
    try {
      if (op.land)
        op.land(landed); // the bytes came with the check
      else
        op.move(std::max(detail::time_left(deadline), milliseconds(1)));
    } catch (...) {
      return job.finish(fail(op, explain_failure(std::current_exception(), op, deadline)));
    }
    job.finish(nullptr);
  }

  /// The participants' check of `op` (not creation): every peer's fingerprint against this
  /// rank's, exchanged over the mesh. Returns the error to fail `op` with, or null when they agree.
  /// A peer whose fingerprint has not come by this rank's deadline is named as not arrived; a
  /// transport failure meanwhile is explained as one of the bytes (a failed process, or a peer that
  /// gave up at its own deadline).
  /// `landed` receives the bytes of a carried collective (operation::land), by rank.
  std::exception_ptr check_with_peers(const operation& op, clock::time_point deadline,
                                      std::vector<std::vector<std::byte>>* landed) {
    if (op.check.peer_ranks.empty()) { // a communicator of one
      if (op.land)
        *landed = {op.carried.mine};
      return nullptr;
    }
    if (mesh)
      return check_over_mesh(op, deadline, {}, landed);
    std::shared_ptr<void> posted;
    if (op.check.lane == detail::gloo_engine::fingerprint_lane::collectives && next_fingerprints_step == op.step)
      posted = std::move(next_fingerprints);
    next_fingerprints.reset();
    // The next step's receives go up before this step's record goes out: a peer sends its next
    // record only once it has this one, so no record ever arrives before its receive (Gloo's loop
    // thread keeps polling a socket whose data has no receive: doc/performance.md).
    post_next_fingerprints(op);
    const auto mine = detail::encode_fingerprint(op.step, op.signature);
    auto exchanged = engine->exchange_fingerprints(mine, op.check.peer_ranks, op.check.lane,
                                                   static_cast<std::uint32_t>(op.step),
                                                   std::max(detail::time_left(deadline), milliseconds(1)), posted);
    if (exchanged.error) {
      std::vector<int> missing;
      for (int r : exchanged.missing)
        missing.push_back(processes[static_cast<std::size_t>(r)]);
      // A failed process is named first (explain_failure asks the cluster); this rank's own timeout
      // names who never sent theirs; a transport failure says whose had not come.
      const bool own_timeout = holds<timeout_error>(exchanged.error);
      if (!own_timeout && !missing.empty()) // the peers closed: did they give up waiting for this one?
        if (auto verdict = verdict_of(op, deadline))
          return in_check_context(op, std::make_exception_ptr(timeout_error(*verdict)));
      if (own_timeout && !missing.empty() && !broken.load(std::memory_order_acquire))
        return name_the_missing(op, missing);
      auto explained = explain_failure(exchanged.error, op, deadline);
      if (missing.empty() || holds<process_failure_error>(explained)) // a failed process is named already
        return explained;
      return detail::with_note(explained, " (the fingerprint of process" + std::string(missing.size() == 1 ? " " : "es ")
                                            + detail::join_list(missing) + " had not come)");
    }
    const std::vector<int> group = group_of(op);
    std::vector<std::byte> records;
    for (int r : group) {
      auto* record = exchanged.records.data() + static_cast<std::size_t>(r) * detail::fingerprint_bytes;
      records.insert(records.end(), record, record + detail::fingerprint_bytes);
    }
    return judge(op, group, records);
  }

  /// The ranks taking part in `op`'s check, this one among them, ascending.
  std::vector<int> group_of(const operation& op) const {
    std::vector<int> ranks{rank};
    ranks.insert(ranks.end(), op.check.peer_ranks.begin(), op.check.peer_ranks.end());
    std::sort(ranks.begin(), ranks.end());
    return ranks;
  }

  /// The desync error when the records of `group` (in its order) differ, or null.
  std::exception_ptr judge(const operation& op, const std::vector<int>& group, const std::vector<std::byte>& records) {
    std::vector<int> by_process;
    std::size_t mine_at = 0;
    for (int r : group) {
      if (r == rank)
        mine_at = by_process.size();
      by_process.push_back(processes[static_cast<std::size_t>(r)]);
    }
    const std::string disagreement = detail::fingerprint_disagreement(
      op.check_what, by_process, records.data(), mine_at,
      " over processes " + detail::bracketed_list_text(op.participants));
    if (disagreement.empty())
      return nullptr;
    return in_check_context(op, std::make_exception_ptr(desync_error(disagreement)));
  }

  /// This rank's time for `op`'s check ran out and the processes `missing` never came: they are
  /// the cause, unless one of them has failed (a peer that gave up on this step first, and
  /// stopped, is not). The verdict goes to the store, and to the peers over the mesh, so that they
  /// and a latecomer report the same.
  std::exception_ptr name_the_missing(const operation& op, const std::vector<int>& missing) {
    try {
      cluster.check_alive(missing);
    } catch (...) {
      return detail::with_context(std::current_exception(), op.where);
    }
    const std::string text = detail::not_arrived_text(op.check_what, op.limit.count(), missing, process());
    if (mesh)
      detail::send_verdict(*mesh, group_of(op), static_cast<std::uint8_t>(op.check.lane), op.step, text);
    publish_verdict(op, text);
    return in_check_context(op, std::make_exception_ptr(timeout_error(text)));
  }

  /// `op`'s check over the shared-memory mesh (fingerprint_dissemination.hpp).
  /// `idle`, when given, runs every participant_liveness_poll while it waits.
  /// `landed` receives the payloads of a carried collective, by rank.
  std::exception_ptr check_over_mesh(const operation& op, clock::time_point deadline,
                                     const std::function<void()>& idle,
                                     std::vector<std::vector<std::byte>>* landed) {
    const std::vector<int> group = group_of(op);
    auto outcome =
      detail::disseminate_fingerprints(*mesh, group, static_cast<std::uint8_t>(op.check.lane), op.step,
                                       detail::encode_fingerprint(op.step, op.signature), deadline, idle,
                                       detail::participant_liveness_poll, op.carried);
    if (landed)
      *landed = std::move(outcome.payloads);
    if (outcome.verdict)
      return in_check_context(op, std::make_exception_ptr(timeout_error(*outcome.verdict)));
    if (outcome.error) {
      if (holds<timeout_error>(outcome.error) && !outcome.missing.empty() && !broken.load(std::memory_order_acquire)) {
        std::vector<int> missing;
        for (int r : outcome.missing)
          missing.push_back(processes[static_cast<std::size_t>(r)]);
        return name_the_missing(op, missing);
      }
      return explain_failure(outcome.error, op, deadline);
    }
    return judge(op, group, outcome.records);
  }

  /// The store key under which the participants that timed out in `op`'s check say who had not
  /// arrived, so a latecomer whose peers have closed their connections reports the same.
  std::string verdict_key(const operation& op) const {
    return "am/comm/" + name + "/verdict/" + std::to_string(static_cast<int>(op.check.lane)) + "/" + op.check_id
           + "/" + std::to_string(op.step);
  }

  /// Publishes `text` as `op`'s verdict (best effort: the error stands without it).
  void publish_verdict(const operation& op, const std::string& text) {
    try {
      cluster.kv_set(verdict_key(op), text);
    } catch (...) {
    }
  }

  /// A verdict on `op` that a peer published before closing, waited for within verdict_wait (the
  /// peer sets it before it closes) and the time left; nullopt when there is none.
  std::optional<std::string> verdict_of(const operation& op, clock::time_point deadline) {
    const milliseconds wait = std::min(verdict_wait, std::max(detail::time_left(deadline), milliseconds(1)));
    try {
      return cluster.kv_get(verdict_key(op), wait);
    } catch (...) {
      return std::nullopt;
    }
  }

  /// Whether `error` holds an E.
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
  static std::exception_ptr in_check_context(const operation& op, std::exception_ptr error) {
    return op.check_errors_in_context ? detail::with_context(std::move(error), op.where) : error;
  }

  /// Before `op`'s record goes out, posts the receives of the next collective's fingerprints.
  void post_next_fingerprints(const operation& op) {
    if (op.check.lane != detail::gloo_engine::fingerprint_lane::collectives || !engine || mesh)
      return;
    const std::vector<int> peers = other_ranks();
    try {
      next_fingerprints = engine->post_fingerprints(peers, op.check.lane, static_cast<std::uint32_t>(op.step + 1));
      next_fingerprints_step = op.step + 1;
    } catch (...) {
      next_fingerprints.reset(); // the next collective posts its own, and meets the failure there
    }
  }

  std::exception_ptr broken_error() const {
    try {
      throw_if_broken();
    } catch (...) {
      return std::current_exception();
    }
    return std::make_exception_ptr(runtime_error("Communicator '" + name + "' is broken"));
  }

  /// A failure while the bytes moved, attributed to a failed process when the cluster knows one:
  /// a peer that died shows up here as a closed connection before the cluster reports it, so a
  /// connection failure waits up to attribution_window for the cluster. A connection that a peer
  /// closed at the deadline is a timeout (Gloo closes every connection of a rank that timed out).
  std::exception_ptr explain_failure(std::exception_ptr error, const operation& op, clock::time_point deadline) {
    if (broken.load(std::memory_order_acquire))
      return detail::with_context(error, op.where); // aborted: the caller reports its own reason
    bool is_timeout = false;
    try {
      std::rethrow_exception(error);
    } catch (const process_failure_error&) {
      return detail::with_context(error, op.where);
    } catch (const timeout_error&) {
      is_timeout = true;
    } catch (...) {
    }
    const auto give_up = clock::now() + attribution_window;
    for (;;) {
      try {
        cluster.check_alive(op.participants);
      } catch (const process_failure_error&) {
        return detail::with_context(std::current_exception(), op.where);
      } catch (...) {
      }
      if (is_timeout)
        return detail::with_context(error, op.where);
      if (clock::now() >= deadline)
        return std::make_exception_ptr(timeout_error(
          op.where + ": did not complete in time: " + detail::message_of(error)
          + " (a peer closes its connections when it times out)"));
      if (clock::now() >= give_up)
        return detail::with_context(error, op.where);
      std::this_thread::sleep_for(detail::participant_liveness_poll);
    }
  }

  /// Caller side: waits for the worker, asking the cluster whether the participants live; gives
  /// up on a failed process or past the deadline, never while the worker may still use the
  /// caller's buffers.
  void await(detail::collective_job& job, const operation& op, clock::time_point deadline, milliseconds limit) {
    const auto give_up = deadline + answer_grace;
    for (;;) {
      if (job.result().wait_for(detail::participant_liveness_poll))
        return job.result().get();
      std::exception_ptr failure;
      try {
        cluster.check_alive(op.participants);
      } catch (...) {
        failure = detail::with_context(std::current_exception(), op.where);
      }
      // A peer that gave up on this step's check, and then stopped, failed after it published
      // why: its verdict names the cause, as it does on that peer.
      if (failure && !op.check.by_cluster && holds<process_failure_error>(failure))
        if (auto verdict = verdict_of(op, clock::now()))
          failure = in_check_context(op, std::make_exception_ptr(timeout_error(*verdict)));
      if (!failure && clock::now() >= give_up)
        failure = std::make_exception_ptr(timeout_error(op.where + ": no result within the timeout of "
                                                        + ms_text(limit) + " (and " + ms_text(answer_grace)
                                                        + " of grace)"));
      if (!failure)
        continue;
      switch (job.abandon()) {
        case detail::collective_job::standing::finished: return job.result().get();
        case detail::collective_job::standing::moving:
          failure = fail(op, failure);
          job.result().wait(); // Gloo fails at once once aborted; then the buffers are free
          std::rethrow_exception(failure);
        case detail::collective_job::standing::abandoned:
          std::rethrow_exception(fail(op, failure));
      }
    }
  }

  /// Refuses a name this process has already used in the cluster, then claims it.
  void claim_name() {
    const std::string key = "am/comm/" + name + "/claimed-by/" + std::to_string(process());
    try {
      cluster.kv_get(key, milliseconds(0));
      throw value_error("Communicator name '" + name + "' was already used by process " + std::to_string(process())
                        + " in this cluster; names are single-use (their rendezvous keys and the supervisor's "
                          "steps belong to one communicator): give the new one another name, e.g. with a counter");
    } catch (const timeout_error&) {
      // not used yet
    }
    cluster.kv_set(key, detail::bracketed_list_text(processes));
  }

  /// Step 0: every participant agrees on the list, then Gloo connects the full mesh.
  void create() {
    const operation_kind kind("create over processes " + detail::bracketed_list_text(processes));
    const std::string signature = kind.signature();
    submit_and_wait(timeout, false, [&] {
      return operation{kind, signature, name, 0, processes, where(signature, name, 0), [this](milliseconds left) {
                         const auto until = clock::now() + left;
                         const int size = static_cast<int>(processes.size());
                         auto created = std::make_unique<detail::gloo_engine>(cluster, "am/gloo/" + name + "/", rank,
                                                                              size, bind_address, until);
                         auto shared = detail::shm_mesh::connect(cluster, "am/shm/" + name + "/", rank, size, until);
                         std::lock_guard<std::mutex> guard(mutex);
                         engine = std::move(created);
                         mesh = std::move(shared);
                         if (broken.load(std::memory_order_relaxed)) {
                           engine->abort("communicator '" + name + "' broke: " + broken_reason);
                           if (mesh)
                             mesh->abort("communicator '" + name + "' broke: " + broken_reason);
                         }
                       }};
    });
  }
};

communicator::communicator(detail::cluster_services& cluster, std::vector<int> processes, std::string name,
                           std::string bind_address, std::chrono::milliseconds timeout) {
  check_name(name);
  if (timeout.count() <= 0)
    throw value_error("A communicator's timeout must be positive, got " + ms_text(timeout));
  const int rank = rank_in(processes, cluster.process_index(), cluster.process_count());
  detail::gloo_engine::check_bind_address(bind_address);
  impl_ = std::make_unique<impl>(cluster, std::move(processes), std::move(name), std::move(bind_address), timeout,
                                 rank);
  impl_->claim_name();
  impl_->create();
}

communicator::~communicator() = default;

const std::string& communicator::name() const noexcept {
  return impl_->name;
}

int communicator::rank() const noexcept {
  return impl_->rank;
}

int communicator::size() const noexcept {
  return static_cast<int>(impl_->processes.size());
}

const std::vector<int>& communicator::processes() const noexcept {
  return impl_->processes;
}

std::chrono::milliseconds communicator::timeout() const noexcept {
  return impl_->timeout;
}

std::uint64_t communicator::steps() const noexcept {
  std::lock_guard<std::mutex> guard(impl_->mutex);
  return impl_->steps;
}

bool communicator::broken() const noexcept {
  return impl_->broken.load(std::memory_order_acquire);
}

std::string communicator::broken_reason() const {
  std::lock_guard<std::mutex> guard(impl_->mutex);
  return impl_->broken_reason;
}

void communicator::all_reduce(const void* input, void* output, std::size_t count, dtype type, reduce_op op,
                              timeout_type timeout) {
  checked_bytes(count, type);
  check_buffer(input, count, "all_reduce's input");
  check_buffer(output, count, "all_reduce's output");
  detail::check_reducible(type, op);
  const std::size_t bytes = checked_bytes(count, type);
  const auto ranks = impl_->processes.size();
  std::function<carried_bytes()> carry;
  if (impl_->carries(bytes)) // every rank's input travels with the check; each reduces them in rank order
    carry = [=, this] {
      return carried_bytes{{copy_of(input, bytes), std::vector<std::size_t>(ranks, bytes)},
                           [=, this](const std::vector<std::vector<std::byte>>& landed) {
                             std::vector<std::byte> blocks(ranks * bytes);
                             for (std::size_t r = 0; r < ranks; ++r) {
                               const auto& block = landed_bytes(landed, r, bytes, impl_->processes);
                               std::copy(block.begin(), block.end(), blocks.begin() + static_cast<std::ptrdiff_t>(r * bytes));
                             }
                             if (count != 0)
                               detail::reduce_blocks(type, op, blocks.data(), static_cast<int>(ranks), count, output);
                           }};
    };
  impl_->run_collective(
    operation_kind("all_reduce(" + std::string(am::name(op)) + ")", type, count),
    [=](detail::gloo_engine& engine, std::uint32_t tag, milliseconds left) {
      engine.all_reduce(input, output, count, type, op, tag, left);
    },
    timeout, {}, carry);
}

void communicator::all_gather(const void* input, void* output, std::size_t count, dtype type, timeout_type timeout) {
  checked_bytes(count, type, impl_->processes.size());
  check_buffer(input, count, "all_gather's input");
  check_buffer(output, count, "all_gather's output");
  // The receives are posted before the check (gloo_engine::post_all_gather says why).
  auto posted = std::make_shared<std::shared_ptr<void>>();
  const std::size_t bytes = checked_bytes(count, type);
  const auto ranks = impl_->processes.size();
  std::function<carried_bytes()> carry;
  if (impl_->carries(bytes))
    carry = [=, this] {
      return carried_bytes{{copy_of(input, bytes), std::vector<std::size_t>(ranks, bytes)},
                           [=, this](const std::vector<std::vector<std::byte>>& landed) {
                             auto* out = static_cast<std::byte*>(output);
                             for (std::size_t r = 0; r < ranks; ++r) {
                               const auto& block = landed_bytes(landed, r, bytes, impl_->processes);
                               std::copy(block.begin(), block.end(), out + r * bytes);
                             }
                           }};
    };
  impl_->run_collective(
    operation_kind("all_gather", type, count),
    [=](detail::gloo_engine& engine, std::uint32_t tag, milliseconds left) {
      engine.all_gather(input, output, count, type, tag, left, *posted);
      posted->reset();
    },
    timeout, [=](detail::gloo_engine& engine, std::uint32_t tag) { *posted = engine.post_all_gather(output, count, type, tag); },
    carry);
}

void communicator::reduce_scatter(const void* input, void* output, std::size_t count, dtype type, reduce_op op,
                                  timeout_type timeout) {
  checked_bytes(count, type);
  check_buffer(input, count, "reduce_scatter's input");
  check_buffer(output, split_block(count, size(), rank()).count, "reduce_scatter's output");
  detail::check_reducible(type, op);
  impl_->run_collective(
    operation_kind("reduce_scatter(" + std::string(am::name(op)) + ")", type, count),
    [=](detail::gloo_engine& engine, std::uint32_t tag, milliseconds left) {
      engine.reduce_scatter(input, output, count, type, op, tag, left);
    },
    timeout);
}

void communicator::broadcast(void* buffer, std::size_t count, dtype type, int root, timeout_type timeout) {
  checked_bytes(count, type);
  check_buffer(buffer, count, "broadcast's buffer");
  if (root < 0 || root >= size())
    throw value_error("broadcast's root " + std::to_string(root) + " is not a rank of communicator '"
                      + impl_->name + "' (0 to " + std::to_string(size() - 1) + ")");
  // A small broadcast's receive is posted before the check (gloo_engine::post_broadcast).
  auto posted = std::make_shared<std::shared_ptr<void>>();
  const std::size_t bytes = checked_bytes(count, type);
  std::function<carried_bytes()> carry;
  if (impl_->carries(bytes)) // the root's bytes reach every rank in the check's rounds
    carry = [=, this] {
      const bool mine = root == rank();
      std::vector<std::size_t> expected(impl_->processes.size(), 0);
      expected[static_cast<std::size_t>(root)] = bytes;
      return carried_bytes{{mine ? copy_of(buffer, bytes) : std::vector<std::byte>{}, std::move(expected)},
                           [=, this](const std::vector<std::vector<std::byte>>& landed) {
                             if (mine)
                               return;
                             const auto& from_root =
                               landed_bytes(landed, static_cast<std::size_t>(root), bytes, impl_->processes);
                             std::copy(from_root.begin(), from_root.end(), static_cast<std::byte*>(buffer));
                           }};
    };
  impl_->run_collective(
    operation_kind("broadcast", type, count, " root=" + std::to_string(root)),
    [=](detail::gloo_engine& engine, std::uint32_t tag, milliseconds left) {
      engine.broadcast(buffer, count, type, root, tag, left, *posted);
      posted->reset();
    },
    timeout,
    [=](detail::gloo_engine& engine, std::uint32_t tag) { *posted = engine.post_broadcast(buffer, count, type, root, tag); },
    carry);
}

void communicator::all_to_all(const void* input, void* output, std::size_t count, dtype type, timeout_type timeout) {
  checked_bytes(count, type);
  check_buffer(input, count, "all_to_all's input");
  check_buffer(output, count, "all_to_all's output");
  if (count % static_cast<std::size_t>(size()) != 0)
    throw value_error("all_to_all splits its " + std::to_string(count) + " elements into " + std::to_string(size())
                      + " equal blocks: the count must be divisible by the number of ranks");
  impl_->run_collective(
    operation_kind("all_to_all", type, count),
    [=](detail::gloo_engine& engine, std::uint32_t tag, milliseconds left) {
      engine.all_to_all(input, output, count, type, tag, left);
    },
    timeout);
}

void communicator::barrier(const std::string& name, timeout_type timeout) {
  agree("Barrier '" + name + "'", "barrier '" + name + "'", timeout);
}

void communicator::agree(const std::string& label, const std::string& signature, timeout_type timeout) {
  if (label.empty())
    throw value_error("communicator::agree needs a label: its errors name the agreement by it");
  impl_->run_collective(
    operation_kind::agreement(label, signature), [](detail::gloo_engine&, std::uint32_t, milliseconds) {}, timeout);
}

namespace {

void check_peer(int peer, int rank, int size, const std::string& communicator, const char* what) {
  if (peer < 0 || peer >= size)
    throw value_error(std::string(what) + "'s peer " + std::to_string(peer) + " is not a rank of communicator '"
                      + communicator + "' (0 to " + std::to_string(size - 1) + ")");
  if (peer == rank)
    throw value_error(std::string(what) + " to its own rank " + std::to_string(rank) + ": copy the buffer instead");
}

operation_kind p2p_kind(dtype type, std::size_t count, int from, int to, std::uint32_t tag) {
  return operation_kind("send/recv", type, count,
                        " from rank " + std::to_string(from) + " to rank " + std::to_string(to)
                          + " tag=" + std::to_string(tag));
}

} // namespace

void communicator::send(const void* data, std::size_t count, dtype type, int peer, std::uint32_t tag,
                        timeout_type timeout) {
  const std::size_t bytes = checked_bytes(count, type);
  check_buffer(data, count, "send's buffer");
  check_peer(peer, rank(), size(), impl_->name, "send");
  impl_->run_p2p(
    rank(), peer, p2p_kind(type, count, rank(), peer, tag),
    [=](detail::gloo_engine& engine, std::uint32_t, milliseconds left) { engine.send(data, bytes, peer, tag, left); },
    timeout);
}

void communicator::recv(void* data, std::size_t count, dtype type, int peer, std::uint32_t tag,
                        timeout_type timeout) {
  const std::size_t bytes = checked_bytes(count, type);
  check_buffer(data, count, "recv's buffer");
  check_peer(peer, rank(), size(), impl_->name, "recv");
  impl_->run_p2p(
    peer, rank(), p2p_kind(type, count, peer, rank(), tag),
    [=](detail::gloo_engine& engine, std::uint32_t, milliseconds left) { engine.recv(data, bytes, peer, tag, left); },
    timeout);
}

} // namespace am
