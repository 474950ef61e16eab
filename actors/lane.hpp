/// Ordered lanes: every call from user code carries (caller, sequence number), and a receiver runs
/// each caller's calls in the order they were issued, whatever order the transport delivers them in.
#ifndef ACTORMESH_ACTORS_LANE_HPP
#define ACTORMESH_ACTORS_LANE_HPP

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>

namespace am {

/// Identifies one caller: a user thread (unique for the life of the process).
using caller_id = std::uint64_t;

/// The header every lane call carries.
struct call_header {
  caller_id caller = 0;  ///< who issued the call
  std::uint64_t seq = 0; ///< position in that caller's stream of calls to one receiver, from 0
};

/// The calling thread's id (assigned on first use, never reused in this process).
caller_id this_caller() noexcept;

/// A fresh caller id that no thread has (a lane issued on behalf of a remote caller).
caller_id new_caller_id() noexcept;

/// A key for a new receiver of lane calls, unique in this process for its whole life (actor ids
/// are not: a second actor system reuses them, and its receivers must start again at sequence 0).
std::uint64_t new_receiver_key() noexcept;

/// The next header for a call from this thread to the receiver with key `receiver`.
/// Sequence numbers count per (caller, receiver) pair, so each receiver sees 0, 1, 2, ... from
/// every caller.
call_header next_call_header(std::uint64_t receiver) noexcept;

/// Receiver side: releases calls in each caller's order. A call that arrives early waits in a small
/// buffer until the calls before it have been released. Not thread-safe: owned by one actor.
template <class Call>
class in_order_admission {
public:
  /// Offers a call; `run` is invoked for it and for every buffered call it unblocks, in order.
  template <class Run>
  void offer(const call_header& h, Call call, Run&& run) {
    auto& next = next_seq_[h.caller];
    if (h.seq != next) {
      early_[h.caller].emplace(h.seq, std::move(call));
      return;
    }
    run(call);
    ++next;
    auto it = early_.find(h.caller);
    if (it == early_.end())
      return;
    auto& waiting = it->second;
    while (!waiting.empty() && waiting.begin()->first == next) {
      Call c = std::move(waiting.begin()->second);
      waiting.erase(waiting.begin());
      run(c);
      ++next;
    }
    if (waiting.empty())
      early_.erase(it);
  }

  /// Number of calls buffered because an earlier call of the same caller has not arrived yet.
  std::size_t buffered() const noexcept {
    std::size_t n = 0;
    for (auto& [caller, calls] : early_)
      n += calls.size();
    return n;
  }

  /// The next sequence number expected from caller `c` (diagnostics: a lane stuck behind a lost call).
  std::uint64_t expected_seq(caller_id c) const {
    auto it = next_seq_.find(c);
    return it == next_seq_.end() ? 0 : it->second;
  }

  /// Forgets caller `c` (it is gone and sends nothing more); calls of it still buffered are dropped.
  void forget(caller_id c) {
    next_seq_.erase(c);
    early_.erase(c);
  }

private:
  std::unordered_map<caller_id, std::uint64_t> next_seq_;
  std::unordered_map<caller_id, std::map<std::uint64_t, Call>> early_;
};

} // namespace am

#endif // ACTORMESH_ACTORS_LANE_HPP
