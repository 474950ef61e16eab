// How a communicator runs its operations (communicator_impl.hpp): numbering them, handing them to
// the worker or running an agreement on the calling thread, waiting for them, and breaking the
// communicator when one fails. The checks against the peers are in communicator_checks.cpp.
#include "devices/collectives/communicator_impl.hpp"

#include "actors/cluster_services.hpp"
#include "actormesh/actors/errors.hpp"
#include "devices/collectives/collective_errors.hpp"
#include "devices/collectives/collective_job.hpp"
#include "devices/collectives/communicator_waits.hpp"
#include "observability/flight_recorder.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>

namespace am {

namespace {

/// How long past an operation's deadline the caller waits for the worker's own (more precise)
/// timeout error before it gives up on the worker.
constexpr std::chrono::milliseconds answer_grace{2000};

} // namespace

std::vector<int> communicator::impl::other_ranks() const {
  std::vector<int> out;
  for (int r = 0; r < static_cast<int>(processes.size()); ++r)
    if (r != rank)
      out.push_back(r);
  return out;
}

std::string communicator::impl::where(const std::string& signature, const std::string& check_id,
                                      std::uint64_t step) const {
  return signature + " (step " + std::to_string(step) + " of communicator '" + check_id + "', rank "
         + std::to_string(rank) + " of " + std::to_string(processes.size()) + ", process "
         + std::to_string(process()) + ")";
}

auto communicator::impl::timeout_of(const timeout_type& t) const -> milliseconds {
  if (t && t->count() <= 0)
    throw value_error("A collective's timeout must be positive, got " + detail::ms_text(*t));
  return t ? *t : timeout;
}

void communicator::impl::throw_if_broken() const {
  if (!broken.load(std::memory_order_acquire))
    return;
  std::lock_guard<std::mutex> guard(mutex);
  throw runtime_error("Communicator '" + name + "' is broken and refuses further operations (" + broken_reason
                      + "); create a new communicator, with a new name, to go on");
}

void communicator::impl::break_with(const std::string& reason) {
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

template <class Make>
void communicator::impl::submit_and_wait(milliseconds limit, bool may_run_here, Make make) {
  const auto deadline = clock::now() + limit;
  auto job = std::make_shared<detail::collective_job>();
  std::shared_ptr<detail::operation> op;
  bool here = false;
  {
    std::lock_guard<std::mutex> guard(mutex);
    op = std::make_shared<detail::operation>(make());
    op->record = observability::process_flight_recorder().issue(op->check_id, op->step, op->kind.name,
                                                                op->kind.type_name, op->kind.shape,
                                                                op->signature, op->participants);
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

void communicator::impl::run_collective(const detail::operation_kind& kind, mover move, const timeout_type& t,
                                        preparer prepare,
                                        const std::function<detail::carried_bytes()>& carry,
                                        direct_mover direct) {
  const milliseconds limit = timeout_of(t);
  throw_if_broken();
  const std::string signature = kind.signature();
  std::optional<detail::carried_bytes> carried;
  if (carry && mesh)
    carried = carry(); // copies the caller's input now: a worker may send it after the caller gave up
  // An agreement moves no bytes and a carried collective moves them with its check: either may
  // run on this thread.
  const bool may_run_here = !kind.label.empty() || carried;
  submit_and_wait(limit, may_run_here, [&] {
    const std::uint64_t step = ++steps;
    const auto tag = static_cast<std::uint32_t>(step);
    const bool over_mesh = mesh && direct && !carried;
    detail::operation op{kind, signature, name, step, processes, where(signature, name, step),
                         [this, move, tag](milliseconds left) { move(*engine, tag, left); },
                         {false, other_ranks(), detail::gloo_engine::fingerprint_lane::collectives}, limit};
    if (over_mesh) // Gloo's receives are posted only when Gloo moves the bytes after all
      op.move = [this, move, prepare, direct, tag, step](milliseconds left) {
        if (!reads_refused) {
          if (direct(*mesh, step, clock::now() + left) == detail::mesh_collective_outcome::done)
            return;
          reads_refused = true;
        }
        if (prepare)
          prepare(*engine, tag);
        move(*engine, tag, left);
      };
    if (carried) {
      op.carried = std::move(carried->payload);
      op.land = std::move(carried->land);
    } else if (prepare && !over_mesh)
      op.prepare = [this, prepare, tag] { prepare(*engine, tag); };
    name_for_check(op);
    return op;
  });
}

void communicator::impl::name_for_check(detail::operation& op) {
  if (!op.kind.label.empty()) {
    op.check_what = op.kind.label;
    op.where = op.check_what + " cannot complete";
    op.check_errors_in_context = false;
    return;
  }
  op.check_what = "Collective " + std::to_string(op.step) + " of communicator '" + op.check_id + "'";
}

void communicator::impl::run_p2p(int from, int to, const detail::operation_kind& kind, mover move,
                                 mesh_mover over_mesh, const timeout_type& t) {
  const milliseconds limit = timeout_of(t);
  throw_if_broken();
  const std::string signature = kind.signature();
  const std::string id = name + "/p2p/" + std::to_string(processes[from]) + "->"
                         + std::to_string(processes[to]);
  std::vector<int> pair{processes[from], processes[to]};
  std::sort(pair.begin(), pair.end());
  submit_and_wait(limit, false, [&] {
    const std::uint64_t step = p2p_steps[{from, to}]++;
    const auto lane = from < to ? detail::gloo_engine::fingerprint_lane::to_higher_rank
                                : detail::gloo_engine::fingerprint_lane::to_lower_rank;
    detail::operation op{kind, signature, id, step, pair, where(signature, id, step),
                         [this, move, over_mesh, lane, step](milliseconds left) {
                           if (mesh)
                             over_mesh(*mesh, static_cast<std::uint8_t>(lane), step, clock::now() + left);
                           else
                             move(*engine, 0, left);
                         },
                         {false, {from == rank ? to : from}, lane}, limit};
    name_for_check(op);
    return op;
  });
}

void communicator::impl::run_here(const detail::operation& op, clock::time_point deadline) {
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
  auto failure = check_over_mesh(
    op, deadline, [&] { cluster.check_alive(op.participants); }, &landed);
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

std::exception_ptr communicator::impl::fail(const detail::operation& op, std::exception_ptr error) {
  const std::string message = detail::message_of(error);
  observability::process_flight_recorder().mark(op.record, observability::op_state::failed, message);
  const std::string path = observability::dump_flight_recorder(process(), message);
  error = detail::with_note(error, observability::flight_recorder_note(path));
  break_with(message);
  return error;
}

void communicator::impl::execute(detail::collective_job& job, const detail::operation& op,
                                 clock::time_point deadline) {
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
      cluster.check_collective(op.check_id, op.step, op.participants, op.signature,
                               detail::time_left(deadline));
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

std::exception_ptr communicator::impl::broken_error() const {
  try {
    throw_if_broken();
  } catch (...) {
    return std::current_exception();
  }
  return std::make_exception_ptr(runtime_error("Communicator '" + name + "' is broken"));
}

void communicator::impl::await(detail::collective_job& job, const detail::operation& op,
                               clock::time_point deadline, milliseconds limit) {
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
                                                      + detail::ms_text(limit) + " (and "
                                                      + detail::ms_text(answer_grace) + " of grace)"));
    if (!failure)
      continue;
    switch (job.abandon()) {
      case detail::collective_job::standing::finished:
        return job.result().get();
      case detail::collective_job::standing::moving:
        failure = fail(op, failure);
        job.result().wait(); // Gloo fails at once once aborted; then the buffers are free
        std::rethrow_exception(failure);
      case detail::collective_job::standing::abandoned:
        std::rethrow_exception(fail(op, failure));
    }
  }
}

void communicator::impl::claim_name() {
  const std::string key = "am/comm/" + name + "/claimed-by/" + std::to_string(process());
  try {
    cluster.kv_get(key, milliseconds(0));
    throw value_error(
      "Communicator name '" + name + "' was already used by process " + std::to_string(process())
      + " in this cluster; names are single-use (their rendezvous keys and the supervisor's "
        "steps belong to one communicator): give the new one another name, e.g. with a counter");
  } catch (const timeout_error&) {
    // not used yet
  }
  cluster.kv_set(key, detail::bracketed_list_text(processes));
}

void communicator::impl::create() {
  const detail::operation_kind kind("create over processes " + detail::bracketed_list_text(processes));
  const std::string signature = kind.signature();
  submit_and_wait(timeout, false, [&] {
    return detail::operation{
      kind, signature, name, 0, processes, where(signature, name, 0), [this](milliseconds left) {
        const auto until = clock::now() + left;
        const int size = static_cast<int>(processes.size());
        auto created = std::make_unique<detail::gloo_engine>(cluster, "am/gloo/" + name + "/", rank, size,
                                                             bind_address, until);
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

} // namespace am
