// The participants' checks of a communicator's operations against each other (communicator_impl.hpp):
// fingerprints exchanged over the shared-memory mesh or Gloo, the verdicts of those that timed out,
// and failures explained by the cluster's word on who failed.
#include "devices/collectives/communicator_impl.hpp"

#include "actors/cluster_services.hpp"
#include "actormesh/actors/errors.hpp"
#include "cluster/membership.hpp"
#include "cluster/rendezvous_text.hpp"
#include "devices/collectives/collective_errors.hpp"
#include "devices/collectives/collective_fingerprint.hpp"
#include "devices/collectives/communicator_waits.hpp"
#include "devices/collectives/fingerprint_dissemination.hpp"

#include <algorithm>
#include <thread>
#include <utility>

namespace am {

namespace {

/// How long a transport failure waits for the cluster to name a failed process.
constexpr std::chrono::milliseconds attribution_window{1000};
/// How long a participant whose peers closed their connections during the check waits for their
/// verdict in the store (they publish it before they close, so it is there or on its way).
constexpr std::chrono::milliseconds verdict_wait{300};

} // namespace

std::exception_ptr communicator::impl::check_with_peers(const detail::operation& op,
                                                        clock::time_point deadline,
                                                        std::vector<std::vector<std::byte>>* landed) {
  if (op.check.peer_ranks.empty()) { // a communicator of one
    if (op.land)
      *landed = {op.carried.mine};
    return nullptr;
  }
  if (mesh)
    return check_over_mesh(op, deadline, {}, landed);
  // Only a collective takes (or drops) the receives posted for the next collective: a send/recv
  // between two of the ranks, checked on its pair's own lane, leaves them for the collective
  // whose records they are (dropping them lost the record a peer had already sent for it).
  std::shared_ptr<void> posted;
  if (op.check.lane == detail::gloo_engine::fingerprint_lane::collectives) {
    if (next_fingerprints_step == op.step)
      posted = std::move(next_fingerprints);
    next_fingerprints.reset();
  }
  // The next step's receives go up before this step's record goes out: a peer sends its next
  // record only once it has this one, so no record ever arrives before its receive (Gloo's loop
  // thread keeps polling a socket whose data has no receive: doc/performance.md).
  post_next_fingerprints(op);
  const auto mine = detail::encode_fingerprint(op.step, op.signature);
  auto exchanged = engine->exchange_fingerprints(mine, op.check.peer_ranks, op.check.lane,
                                                 static_cast<std::uint32_t>(op.step),
                                                 std::max(detail::time_left(deadline), milliseconds(1)),
                                                 posted);
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
    return explain_with_missing(exchanged.error, op, deadline, missing);
  }
  const std::vector<int> group = group_of(op);
  std::vector<std::byte> records;
  for (int r : group) {
    auto* record = exchanged.records.data() + static_cast<std::size_t>(r) * detail::fingerprint_bytes;
    records.insert(records.end(), record, record + detail::fingerprint_bytes);
  }
  return judge(op, group, records);
}

std::vector<int> communicator::impl::group_of(const detail::operation& op) const {
  std::vector<int> ranks{rank};
  ranks.insert(ranks.end(), op.check.peer_ranks.begin(), op.check.peer_ranks.end());
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

std::exception_ptr communicator::impl::judge(const detail::operation& op, const std::vector<int>& group,
                                             const std::vector<std::byte>& records) {
  if (detail::fingerprints_agree(records.data(), group.size()))
    return nullptr;
  std::vector<int> by_process;
  std::size_t mine_at = 0;
  for (int r : group) {
    if (r == rank)
      mine_at = by_process.size();
    by_process.push_back(processes[static_cast<std::size_t>(r)]);
  }
  const std::string disagreement =
    detail::fingerprint_disagreement(op.check_what, by_process, records.data(), mine_at,
                                     " over processes " + detail::bracketed_list_text(op.participants));
  if (disagreement.empty())
    return nullptr;
  return in_check_context(op, std::make_exception_ptr(desync_error(disagreement)));
}

std::exception_ptr communicator::impl::name_the_missing(const detail::operation& op,
                                                        const std::vector<int>& missing) {
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

std::exception_ptr communicator::impl::check_over_mesh(const detail::operation& op,
                                                       clock::time_point deadline,
                                                       const std::function<void()>& idle,
                                                       std::vector<std::vector<std::byte>>* landed) {
  const std::vector<int> group = group_of(op);
  auto outcome = detail::disseminate_fingerprints(*mesh, group, static_cast<std::uint8_t>(op.check.lane),
                                                  op.step, detail::encode_fingerprint(op.step, op.signature),
                                                  deadline, idle, detail::participant_liveness_poll,
                                                  op.carried);
  if (landed)
    *landed = std::move(outcome.payloads);
  if (outcome.verdict)
    return in_check_context(op, std::make_exception_ptr(timeout_error(*outcome.verdict)));
  if (outcome.error) {
    if (holds<timeout_error>(outcome.error) && !outcome.missing.empty()
        && !broken.load(std::memory_order_acquire)) {
      std::vector<int> missing;
      for (int r : outcome.missing)
        missing.push_back(processes[static_cast<std::size_t>(r)]);
      return name_the_missing(op, missing);
    }
    std::vector<int> missing;
    for (int r : outcome.missing)
      missing.push_back(processes[static_cast<std::size_t>(r)]);
    return explain_with_missing(outcome.error, op, deadline, missing);
  }
  return judge(op, group, outcome.records);
}

std::exception_ptr communicator::impl::explain_with_missing(std::exception_ptr error,
                                                             const detail::operation& op,
                                                             clock::time_point deadline,
                                                             const std::vector<int>& missing) {
  auto explained = explain_failure(std::move(error), op, deadline);
  if (missing.empty() || holds<process_failure_error>(explained)) // a failed process is named already
    return explained;
  // The wait reached this rank's deadline with the peers alive and their records missing: the
  // same case as this rank's own timeout, whichever side closed its connections first.
  if (holds<timeout_error>(explained) && !broken.load(std::memory_order_acquire))
    return name_the_missing(op, missing);
  return detail::with_note(explained, " (the fingerprint of process"
                                        + std::string(missing.size() == 1 ? " " : "es ")
                                        + detail::join_list(missing) + " had not come)");
}

std::string communicator::impl::verdict_key(const detail::operation& op) const {
  return "am/comm/" + name + "/verdict/" + std::to_string(static_cast<int>(op.check.lane)) + "/" + op.check_id
         + "/" + std::to_string(op.step);
}

void communicator::impl::publish_verdict(const detail::operation& op, const std::string& text) {
  try {
    cluster.kv_set(verdict_key(op), text);
  } catch (...) {
  }
}

std::optional<std::string> communicator::impl::verdict_of(const detail::operation& op,
                                                          clock::time_point deadline) {
  const milliseconds wait = std::min(verdict_wait, std::max(detail::time_left(deadline), milliseconds(1)));
  try {
    return cluster.kv_get(verdict_key(op), wait);
  } catch (...) {
    return std::nullopt;
  }
}

std::exception_ptr communicator::impl::in_check_context(const detail::operation& op,
                                                        std::exception_ptr error) {
  return op.check_errors_in_context ? detail::with_context(std::move(error), op.where) : error;
}

void communicator::impl::post_next_fingerprints(const detail::operation& op) {
  if (op.check.lane != detail::gloo_engine::fingerprint_lane::collectives || !engine || mesh)
    return;
  const std::vector<int> peers = other_ranks();
  try {
    next_fingerprints = engine->post_fingerprints(peers, op.check.lane,
                                                  static_cast<std::uint32_t>(op.step + 1));
    next_fingerprints_step = op.step + 1;
  } catch (...) {
    next_fingerprints.reset(); // the next collective posts its own, and meets the failure there
  }
}

std::exception_ptr communicator::impl::explain_failure(std::exception_ptr error, const detail::operation& op,
                                                       clock::time_point deadline) {
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
      return std::make_exception_ptr(
        timeout_error(op.where + ": did not complete in time: " + detail::message_of(error)
                      + " (a peer closes its connections when it times out)"));
    if (clock::now() >= give_up)
      return detail::with_context(error, op.where);
    std::this_thread::sleep_for(detail::participant_liveness_poll);
  }
}

} // namespace am
