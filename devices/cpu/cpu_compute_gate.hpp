/// The compute gate of the CPU devices (doc/performance.md, "Item 3: jitted complex_computation"),
/// off by default: when on, at most `slots` device threads compute at a time, in the order they
/// asked. Eight devices on two cores with 2 slots then run two at a time, each on a core of its own
/// from start to end (as a hand-written loop over both cores does), instead of eight threads that
/// the OS time-slices and balances between the cores. Measured under load it was slower (a woken
/// holder waits behind other processes' threads; eight runnable threads do not), so it stays an
/// option for quiet machines: AM_CPU_COMPUTE_SLOTS=N. Only work that never waits on another device
/// is gated (fused regions, reductions, concatenations), so a slot is always given back; small
/// stages skip it.
#pragma once

#include "actormesh/actors/program.hpp"
#include "devices/cpu/cpu_compiler.hpp"

#include <cstdint>

namespace am::detail {

/// How many stages may compute at once: AM_CPU_COMPUTE_SLOTS when set, else 0 (no gate).
int cpu_compute_slots() noexcept;

/// Changes the number of slots (0: no gate) for the stages that start from now on (benchmarks
/// compare with and without). Stages holding a slot keep it.
void set_cpu_compute_slots(int slots) noexcept;

/// Stages of fewer elements than this run without asking for a slot.
inline constexpr std::int64_t gated_stage_elements = std::int64_t{1} << 16;

/// A slot held for a scope: waits for one (first come, first served) when the gate is on and the
/// stage covers at least gated_stage_elements elements; gives it back on destruction.
class compute_slot {
public:
  explicit compute_slot(std::int64_t elements);
  /// The slot of one stage of `c` (compiled from `p`): fused regions by their element count,
  /// reductions and concatenations by their operands'; dot stages are not gated (BLAS runs one
  /// call at a time over every core itself, devices/cpu/cpu_blas.hpp).
  compute_slot(const cpu_stage& stage, const compiled_program& c, const program& p);
  ~compute_slot();

  compute_slot(const compute_slot&) = delete;
  compute_slot& operator=(const compute_slot&) = delete;

private:
  bool held_ = false;
};

} // namespace am::detail
