/// Checks that the processes of a multi-controller cluster issued the same call at the same point
/// of their programs (pmap's agreement, parallel/detail/pmap_agreement.hpp), without a round trip
/// through the supervisor: each sequence has a communicator over its processes, and every call is
/// one communicator::agree step, whose participants compare each other's fingerprints.
/// Internal to the floors above devices/.
#pragma once

#include "devices/runtime_context.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace am::detail {

/// Checks that every process of `processes` (sorted, this one among them) issued `signature` as
/// the next call of `sequence` (a name the same in every process for the same device list,
/// "pmap over devices [0, 2]"), within `timeout`. Errors name the call "<sequence>, call <n>" (n
/// counts this process's calls of the sequence from 0): am::desync_error naming who issued what,
/// am::timeout_error naming who never issued it, am::process_failure_error; each with the flight
/// recorder's note. The sequence's communicator is made at its first call (through the supervisor:
/// it is collective), and again after a failure broke it (every participant saw that failure, so
/// every one makes the next). Thread-safe: calls of one sequence are met in the order they reach
/// it.
void agree_across(runtime_context& context, const std::string& sequence, const std::vector<int>& processes,
                  const std::string& signature, std::chrono::milliseconds timeout);

} // namespace am::detail
