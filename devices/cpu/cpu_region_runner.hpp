/// Fused regions of CPU programs run over their tiles (cpu_compiler.hpp), shared between device
/// threads (doc/performance.md, "Item 3: jitted complex_computation"): a large region's tiles are
/// handed out in chunks, taken by the thread that runs the region and by any device thread that
/// finished its own work meanwhile (help_fused_regions). Eight devices on two cores then keep both
/// cores busy until the last tile is done, however the OS placed their threads, instead of one core
/// idling while the other still holds several devices' work. Every tile is computed the same way
/// whichever thread takes it, so results do not change.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/program.hpp"
#include "devices/cpu/cpu_compiler.hpp"
#include "devices/cpu/cpu_runner.hpp"
#include "devices/detail/buffer_pool.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace am::detail {

/// Tiles per chunk that a thread takes at a time.
inline constexpr std::int64_t region_chunk_tiles = 64;

/// Regions of fewer chunks than this run alone, not shared.
inline constexpr std::int64_t shared_region_chunks = 4;

/// Runs region `r` of `c` (compiled from `p`): allocates its outputs into `values` from `pool`,
/// then computes its tiles with `scratch`, sharing them with helpers when it is large. Returns once
/// every tile is done, by whichever thread.
void run_fused_region(const fused_region& r, const compiled_program& c, const program& p,
                      std::vector<buffer_ref>& values, const std::shared_ptr<buffer_pool>& pool,
                      cpu_scratch& scratch);

/// Takes chunks of the regions other threads are running, with `scratch`, until none has chunks
/// left; returns how many it ran. Cheap when there is nothing to take.
std::int64_t help_fused_regions(cpu_scratch& scratch);

/// Whether large regions are shared: AM_CPU_SHARE_TILES=0 turns it off, else on.
bool region_sharing() noexcept;

/// Turns sharing on or off for regions that start from now on (benchmarks compare both).
void set_region_sharing(bool on) noexcept;

/// Chunks run by helpers since the process started (for tests).
std::uint64_t helped_region_chunks() noexcept;

} // namespace am::detail
