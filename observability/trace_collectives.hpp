/// Collectives and barriers in the trace, recorded through the flight recorder's own hooks (its
/// issue and mark, observability/flight_recorder.cpp): one complete event per operation, from its
/// issue to its end, on a track per communicator, with an instant where its bytes start moving
/// (the cluster's check passed). Only the process's recorder is traced. Internal.
#pragma once

#include "observability/flight_recorder.hpp"

#include <cstdint>

namespace am::observability {

/// `entry` was just issued in `recorder`.
void trace_collective_issued(const flight_recorder* recorder, const flight_entry& entry) noexcept;

/// Record `record` of `recorder` moved to `state`.
void trace_collective_marked(const flight_recorder* recorder, std::uint64_t record, op_state state) noexcept;

} // namespace am::observability
