/// How a rendezvous that failed is told: the same words whether the supervisor saw it (a barrier,
/// a communicator's creation, pmap's agreement) or the participants of a collective saw it
/// themselves by checking each other's fingerprints (devices/collectives/collective_fingerprint.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace am::detail {

/// "<what> timed out after <timeout_ms> ms: process 2 has not arrived (process 0 waited that long)";
/// `missing` is not empty.
std::string not_arrived_text(const std::string& what, std::int64_t timeout_ms, const std::vector<int>& missing,
                             int waiter);

/// "<what> differs between processes (desync): process 0 issued <signature>; process 1 issued ...",
/// one entry per (process, signature), in the order given.
std::string desync_text(const std::string& what, const std::vector<std::pair<int, std::string>>& issued);

} // namespace am::detail
