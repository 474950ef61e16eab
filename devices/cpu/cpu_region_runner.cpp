#include "devices/cpu/cpu_region_runner.hpp"

#include "devices/cpu/cpu_buffer.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace am::detail {

namespace {

/// A region being run, as its helpers see it: read-only but for the chunk counter and the count
/// of helpers still working on it. Lives on the stack of the thread that runs the region, which
/// waits for its helpers before it returns.
struct region_job {
  const fused_region* region = nullptr;
  std::int64_t tile = 0;
  std::int64_t chunks = 0;
  std::size_t scratch_bytes = 0;
  std::vector<unsigned char*> base;     ///< per slot: its memory, or null for a scratch row
  std::vector<std::int64_t> step_bytes; ///< per slot: how far it moves per element of the tile
  std::atomic<std::int64_t> next{0};    ///< the next chunk to hand out
  int helpers = 0;                      ///< under job_board::mutex
};

/// The regions open to helpers.
struct job_board {
  std::mutex mutex;
  std::condition_variable helper_left; ///< a job's helpers went down to 0
  std::vector<region_job*> jobs;
  std::atomic<int> open{0}; ///< jobs.size(), read without the lock
  std::atomic<std::uint64_t> helped{0};
};

job_board& board() {
  static job_board b;
  return b;
}

std::atomic<bool>& sharing() {
  static std::atomic<bool> on{[] {
    const char* env = std::getenv("AM_CPU_SHARE_TILES");
    return !(env && std::strcmp(env, "0") == 0);
  }()};
  return on;
}

/// Runs chunks of `job` with `scratch` until none is left; returns how many.
std::int64_t run_chunks(region_job& job, unsigned char* scratch) {
  auto& r = *job.region;
  auto nslots = r.slots.size();
  auto row_bytes = static_cast<std::size_t>(job.tile) * 8;
  std::vector<unsigned char*> base(nslots), ptr(nslots);
  for (std::size_t s = 0; s < nslots; ++s)
    base[s] = job.base[s] ? job.base[s] : scratch + static_cast<std::size_t>(r.slots[s].index) * row_bytes;
  tile_call call;
  auto run_steps = [&](const std::vector<region_step>& steps) {
    for (auto& step : steps) {
      call.dst = ptr[static_cast<std::size_t>(step.dst)];
      for (int j = 0; j < 3; ++j)
        call.src[j] = step.src[j] >= 0 ? ptr[static_cast<std::size_t>(step.src[j])] : nullptr;
      call.params = step.params.get();
      step.kernel(call);
    }
  };
  auto at = [&](std::int64_t begin) {
    for (std::size_t s = 0; s < nslots; ++s)
      ptr[s] = base[s] + begin * job.step_bytes[s];
    call.begin = begin;
    call.n = std::min(job.tile, r.elements - begin);
  };
  bool prologue_done = false;
  std::int64_t ran = 0;
  const std::int64_t chunk_elements = region_chunk_tiles * job.tile;
  for (;;) {
    auto k = job.next.fetch_add(1, std::memory_order_relaxed);
    if (k >= job.chunks)
      break;
    if (!prologue_done) { // tiles the same everywhere: computed once per thread, left in its scratch rows
      at(0);
      run_steps(r.prologue);
      prologue_done = true;
    }
    auto end = std::min(r.elements, (k + 1) * chunk_elements);
    for (auto begin = k * chunk_elements; begin < end; begin += job.tile) {
      at(begin);
      run_steps(r.steps);
    }
    ++ran;
  }
  return ran;
}

} // namespace

void run_fused_region(const fused_region& r, const compiled_program& c, const program& p,
                      std::vector<buffer_ref>& values, const std::shared_ptr<buffer_pool>& pool,
                      cpu_scratch& scratch) {
  for (auto v : r.outputs) {
    auto& t = p.code[static_cast<std::size_t>(v)].type;
    values[static_cast<std::size_t>(v)] = make_cpu_buffer(t.dtype, t.shape, pool);
  }
  region_job job;
  job.region = &r;
  job.tile = c.tile;
  job.scratch_bytes = c.scratch_bytes;
  const std::int64_t chunk_elements = region_chunk_tiles * c.tile;
  job.chunks = (r.elements + chunk_elements - 1) / chunk_elements;
  auto nslots = r.slots.size();
  job.base.assign(nslots, nullptr);
  job.step_bytes.assign(nslots, 0);
  for (std::size_t s = 0; s < nslots; ++s) {
    auto& slot = r.slots[s];
    if (slot.where == region_slot::kind::scratch)
      continue;
    job.base[s] = static_cast<unsigned char*>(values[static_cast<std::size_t>(slot.index)]->data());
    if (slot.where == region_slot::kind::buffer)
      job.step_bytes[s] = slot.elem_size;
  }
  auto* own = static_cast<unsigned char*>(scratch.get(c.scratch_bytes));
  if (job.chunks < shared_region_chunks || !sharing().load(std::memory_order_relaxed)) {
    run_chunks(job, own);
    return;
  }
  auto& b = board();
  {
    std::lock_guard<std::mutex> lock(b.mutex);
    b.jobs.push_back(&job);
    b.open.store(static_cast<int>(b.jobs.size()), std::memory_order_relaxed);
  }
  run_chunks(job, own);
  // Closed to new helpers; then wait for those still finishing a chunk. They leave under the
  // lock, so once it sees none, none touches `job` again (and their writes are seen).
  std::unique_lock<std::mutex> lock(b.mutex);
  b.jobs.erase(std::find(b.jobs.begin(), b.jobs.end(), &job));
  b.open.store(static_cast<int>(b.jobs.size()), std::memory_order_relaxed);
  b.helper_left.wait(lock, [&] { return job.helpers == 0; });
}

std::int64_t help_fused_regions(cpu_scratch& scratch) {
  auto& b = board();
  std::int64_t ran = 0;
  while (b.open.load(std::memory_order_relaxed) > 0) {
    region_job* job = nullptr;
    {
      std::lock_guard<std::mutex> lock(b.mutex);
      std::int64_t most = 0;
      for (auto* j : b.jobs) { // the one with the most chunks left
        auto left = j->chunks - j->next.load(std::memory_order_relaxed);
        if (left > most) {
          most = left;
          job = j;
        }
      }
      if (job)
        ++job->helpers;
    }
    if (!job)
      break;
    std::int64_t n = 0;
    try {
      n = run_chunks(*job, static_cast<unsigned char*>(scratch.get(job->scratch_bytes)));
    } catch (...) { // no scratch memory: leave the chunks to the region's own thread
    }
    ran += n;
    std::lock_guard<std::mutex> lock(b.mutex);
    if (--job->helpers == 0)
      b.helper_left.notify_all();
  }
  if (ran > 0)
    b.helped.fetch_add(static_cast<std::uint64_t>(ran), std::memory_order_relaxed);
  return ran;
}

bool region_sharing() noexcept {
  return sharing().load(std::memory_order_relaxed);
}

void set_region_sharing(bool on) noexcept {
  sharing().store(on, std::memory_order_relaxed);
}

std::uint64_t helped_region_chunks() noexcept {
  return board().helped.load(std::memory_order_relaxed);
}

} // namespace am::detail
