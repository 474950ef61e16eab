/// The CPU program compiler (doc/architecture.md, "CPU programs"): a program becomes a list of
/// stages. Maximal regions of same-sized elementwise work (elementwise operations, constant / iota
/// / random sources, and gathers: broadcast_in_dim, slice, transpose) run as one loop over
/// cache-sized tiles whose intermediates live in a small scratch area; reshape (and a convert to
/// the same dtype) is a zero-copy alias; concatenate, reductions and dot are stages of their own.
#pragma once

#include "actormesh/actors/program.hpp"
#include "devices/cpu/cpu_kernels.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace am::detail {

/// How a compiled program is built.
struct compile_options {
  bool fuse = true;               ///< false: every instruction is its own stage (one pass each)
  cpu_isa isa = preferred_isa();  ///< the instruction set whose kernels run
  std::int64_t tile = 512;        ///< elements per tile of a fused loop (the fastest size tried)
};

/// Where a region finds a value during a tile.
struct region_slot {
  enum class kind : std::uint8_t {
    scratch,  ///< tile-local scratch row `index`
    buffer,   ///< the materialized value `index` (an instruction number), at the tile's offset
    base,     ///< the materialized value `index`, at its first element (gathers)
  } where = kind::scratch;
  std::int32_t index = 0;
  std::uint8_t elem_size = 0;
};

/// One instruction of a fused region.
struct region_step {
  tile_kernel kernel = nullptr;
  std::int32_t dst = -1;                ///< slot written
  std::int32_t src[3] = {-1, -1, -1};   ///< slots read
  std::shared_ptr<const void> params;   ///< source parameters
  std::int32_t instruction = 0;         ///< the program instruction it computes
};

/// A fused loop over `elements` elements.
struct fused_region {
  std::int64_t elements = 0;
  std::vector<region_step> prologue; ///< steps whose tile is the same everywhere: run once, first
  std::vector<region_step> steps;
  std::vector<region_slot> slots;
  std::vector<std::int32_t> outputs; ///< values this region materializes
  int scratch_rows = 0;
};

/// One step of a compiled program.
struct cpu_stage {
  enum class kind : std::uint8_t { fused, concatenate, reduce, dot } what = kind::fused;
  std::int32_t region = -1;      ///< for fused stages
  std::int32_t instruction = -1; ///< for the others: the program instruction
  std::vector<std::int32_t> release; ///< values whose buffers are not needed after this stage
};

/// A program compiled for CPU devices. Immutable; shared by every run of the program.
struct compiled_program {
  std::vector<std::int32_t> root;   ///< per instruction: the value whose buffer holds its elements
  std::vector<cpu_stage> stages;
  std::vector<fused_region> regions;
  std::vector<std::int32_t> inputs_released; ///< parameters not needed by any stage nor output
  std::int64_t tile = 0;
  std::size_t scratch_bytes = 0;    ///< scratch a run needs
  cpu_isa isa = cpu_isa::scalar;
};

/// Compiles a (validated) program.
std::shared_ptr<const compiled_program> compile_for_cpu(const program& p, const compile_options& options = {});

/// A readable listing of the stages (for tests and debugging).
std::string to_string(const compiled_program& c, const program& p);

} // namespace am::detail
