/// The clock offset of a process's trace to process 0's, measured through the mesh supervisor
/// (its key-value store) when a traced cluster starts: process i sends its steady-clock reading,
/// process 0 answers with its own, and i takes offset = answer - midpoint of its round trip, from
/// the round with the shortest round trip. Internal.
#pragma once

#include "observability/trace_writer.hpp"

namespace am::detail {
class cluster_services;
}

namespace am::observability {

/// Rounds of the exchange per process.
inline constexpr int trace_clock_rounds = 5;

/// Fills info.origin_ns (process 0's origin, on its clock), offset_ns, rtt_ns and clock_note for
/// this process of `cluster`, whose own trace origin is `local_origin_ns`. Process 0 answers the
/// others in turn. Never throws: an exchange that fails leaves offset 0 and says why in the note.
void measure_trace_clock(detail::cluster_services& cluster, std::int64_t local_origin_ns, trace_process_info& info);

} // namespace am::observability
