/// The live counters as they travel: `actormesh info --watch` asks the mesh
/// supervisor (message stats_request_atom), which asks every process's cluster client
/// (stats_atom) and answers with every process's snapshot, or why a process gave none. Every
/// message holds CAF's built-in types only (atoms, integers, strings); payloads are wire_codec
/// bytes decoded with every length checked. Internal.
#pragma once

#include "actormesh/observability/runtime_stats.hpp"

#include <caf/atom.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace am::detail::stats {

/// outside -> supervisor: (timeout ms); answered with cluster_stats bytes.
using stats_request_atom = caf::atom_constant<caf::atom("am_statsq")>;
/// supervisor -> cluster client: (); answered with process_stats bytes.
using stats_atom = caf::atom_constant<caf::atom("am_stats")>;

/// One process's answer: its snapshot, or why there is none.
struct process_stats {
  int process = 0;
  bool ok = false;
  std::string error;              ///< when !ok
  runtime_stats_snapshot snapshot; ///< when ok
};

std::string encode(const process_stats& p);
process_stats decode_process_stats(std::string_view bytes);

/// Every process's answers, by process.
std::string encode(const std::vector<process_stats>& all);
std::vector<process_stats> decode_cluster_stats(std::string_view bytes);

/// This process's answer to stats_atom: `snapshot()` (the runtime's am::runtime_stats) as process
/// `process`, or the error it throws; without a `snapshot`, an answer saying there are no counters.
std::string answer_stats_request(int process, const std::function<runtime_stats_snapshot()>& snapshot);

/// The supervisor's side: asks every `(process, client)` for its stats (a null client answers
/// "not joined") and returns the promise of the gathered cluster_stats bytes, delivered once all
/// have answered or `timeout` passed (a silent process is listed with "no answer within ...").
caf::response_promise gather_stats(caf::event_based_actor* self, std::vector<std::pair<int, caf::actor>> clients,
                                   std::chrono::milliseconds timeout);

} // namespace am::detail::stats
