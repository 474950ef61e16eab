/// JAX's reached_preemption_sync_point: when any process gets a preemption notice (SIGTERM), the
/// processes agree on one step at which all of them save a checkpoint.
#ifndef ACTORMESH_MULTIHOST_PREEMPTION_HPP
#define ACTORMESH_MULTIHOST_PREEMPTION_HPP

#include <cstdint>

namespace am::multihost {

/// Starts catching the preemption notice now (SIGTERM, with a Boost.Asio signal_set on this
/// process); reached_preemption_sync_point does it on its first call. Until one of them runs,
/// SIGTERM keeps its default action. Does nothing without a cluster (one process).
void enable_preemption_notice();

/// True exactly at the agreed safe step: once any process has caught SIGTERM, the notice goes
/// through the coordinator's store to every process; each reports the step of its last call when
/// it learns of it (from a background thread), and all agree on safe step = the largest reported
/// step + 1. Call it on every
/// process at every step, from the same starting step. A process that reaches a step past its
/// report before every report is in waits for them (the collective timeout: then am::timeout_error
/// naming the processes that did not report; am::process_failure_error when one failed).
/// Without a cluster (one process) it returns false, as JAX does without a distributed runtime.
bool reached_preemption_sync_point(std::int64_t step);

} // namespace am::multihost

#endif // ACTORMESH_MULTIHOST_PREEMPTION_HPP
