/// pmap with collective stages (doc/pmap.md, "How it runs"): the function traced once on one
/// device's slice is cut at its reductions over pmap's own axis (psum, pmean, pmax, pmin of float32
/// and float64), its all_gathers, ppermutes and psum_scatters (along any dimension) over it, on CPU
/// devices over any device list. Each segment between them runs as one program per device (a
/// jit-like plan); each such collective runs as a stage between segments: within a process the
/// local devices' parts are combined (or placed side by side) into one buffer the local devices
/// share (whole, or a block each), across processes the engine all-reduces (all-gathers,
/// all-to-alls, reduce-scatters) it among the processes (devices/collectives/stage_reduction.hpp,
/// stage_gather.hpp, stage_permute.hpp, stage_scatter.hpp). Other collectives stay array operations
/// inside the segments (batching_collectives.cpp).
#ifndef ACTORMESH_PARALLEL_DETAIL_STAGED_PMAP_HPP
#define ACTORMESH_PARALLEL_DETAIL_STAGED_PMAP_HPP

#include "actormesh/parallel/axis_spec.hpp"
#include "actormesh/parallel/detail/tracing.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace am::detail {

/// The staged programs of one pmapped function, by argument signature (at most
/// staged_cache_bound; past it the cache starts again, as a jitted function's plans do).
struct staged_cache;

/// Signatures one staged cache keeps: each holds a traced graph and its segments' plans, heavier
/// than one jitted plan, so fewer than a plan cache's.
constexpr std::size_t staged_cache_bound = 128;

/// A fresh cache.
std::shared_ptr<staged_cache> make_staged_cache();

/// One call of a pmapped function, its arguments already placed.
struct staged_call {
  const array_function* f = nullptr;
  std::vector<array> global;   ///< mapped ones one slice per device (`stacked`), others `replicated`
  std::vector<bool> mapped;    ///< per argument
  std::int64_t size = 0;       ///< the mapped axis's size
  std::string axis_name;
  axis_specs out_axes;
  sharding_ptr stacked;
  sharding_ptr replicated;
};

/// The number of signatures of `cache` that run with stages.
std::size_t staged_programs(const staged_cache& cache);

/// Turns the staged path on or off for the whole process (on unless the environment variable
/// AM_PMAP_STAGES is 0): off, every pmap runs as one plan, the way it runs inside a trace. For
/// comparing the two paths in tests and benchmarks.
void set_stages_enabled(bool on) noexcept;

/// Runs `call` with stages; empty when it has none or cannot have them here (inside a trace, a
/// single-controller cluster, devices other than CPUs): the caller then runs it as one plan.
std::optional<std::vector<array>> run_staged(staged_cache& cache, const staged_call& call);

} // namespace am::detail

#endif // ACTORMESH_PARALLEL_DETAIL_STAGED_PMAP_HPP
