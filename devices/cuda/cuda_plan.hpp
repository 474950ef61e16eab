/// How the CUDA executor runs a program (doc/architecture.md, "Per-shard programs"): the program is
/// split once into stages. Maximal elementwise regions (with their constant, iota and random
/// sources, in-region reshapes and broadcasts of materialized values) become ONE fused kernel
/// generated at run time; everything else (transpose, slice, concatenate, reductions, dot, lone
/// instructions) runs as a single precompiled kernel. Plain C++: no CUDA headers, so it is
/// unit-tested without a GPU.
#pragma once

#include "actormesh/actors/program.hpp"

#include <cstdint>
#include <vector>

namespace am::detail::cuda {

/// One step of an execution plan.
struct stage {
  /// `single` runs one instruction with a precompiled kernel (or as an alias, for reshape);
  /// `fused` runs a region as one generated kernel.
  enum class kind_t : std::uint8_t { single, fused };

  kind_t kind = kind_t::single;
  std::int32_t instruction = -1;     ///< single: the instruction it computes
  std::vector<std::int32_t> members; ///< fused: the region's instructions, in program order
  std::vector<std::int32_t> inputs;  ///< fused: materialized values the region reads
  std::vector<std::int32_t> outputs; ///< fused: members written to buffers (used later, or returned)
  std::vector<std::int32_t> scalars; ///< fused: constants passed as kernel arguments (as double)
  std::int64_t elements = 0;         ///< fused: the element count every member shares
  std::vector<std::int32_t> release; ///< values no later stage reads and the program does not return
};

/// The stages of one program, in an order that respects every dependency.
struct execution_plan {
  std::vector<stage> stages;
  /// Per instruction: the `constant` whose scalar it repeats (itself, or a reshape/broadcast of a
  /// constant), or -1. Such values are inlined into fused kernels and only filled into a buffer
  /// when a single stage or the caller needs them (that fill is then a single stage of its own).
  std::vector<std::int32_t> constant_root;
};

/// Splits `p` into stages. With `fuse` false every instruction is a single stage (one kernel per
/// instruction, the unfused path used when NVRTC is unavailable or fusion is turned off).
execution_plan plan_program(const program& p, bool fuse);

/// True when a fused stage is better run as its one member's precompiled kernel (a region of one
/// instruction that reads only materialized buffers: compiling it would only cost time).
bool runs_as_single(const stage& s);

} // namespace am::detail::cuda
