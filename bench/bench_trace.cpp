// Trace benchmark: what recording a trace costs. The dispatch measure of bench_sharding (the
// caller's cost of a tiny operation on an 8-shard array, no waiting per call) and the same
// operations run to completion, each with the trace off and on, interleaved in one run (median of
// the rounds); printed as ratios against the untraced run. Off, every hook is one relaxed load and
// a branch: their cost is measured directly too and given per operation.
//
//   ./build/bench/bench_trace [--ops 20000] [--rounds 7]
#include <actormesh.hpp>

#include "bench_dispatch.hpp"
#include "bench_flags.hpp"
#include "bench_report.hpp"
#include "observability/trace_hooks.hpp"
#include "observability/trace_writer.hpp"

#include <fmt/core.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using clock_type = std::chrono::steady_clock;

namespace {

struct measure {
  double dispatch_us; ///< caller side, per operation
  double complete_us; ///< until the last result is ready, per operation
  double cpu_us;      ///< CPU time of the whole process (caller and device threads), per operation
};

/// The process's CPU time in microseconds: every thread's, preemption excluded (on a loaded
/// machine wall times of one round vary by 2x; CPU time far less).
double process_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

measure run_ops(const am::array& tiny, int ops) {
  am::array last = tiny;
  const double cpu_start = process_cpu_us();
  auto start = clock_type::now();
  for (int i = 0; i < ops; ++i)
    last = tiny + 1.0f;
  auto issued = clock_type::now();
  last.block_until_ready();
  auto done = clock_type::now();
  return {std::chrono::duration<double, std::micro>(issued - start).count() / ops,
          std::chrono::duration<double, std::micro>(done - start).count() / ops, (process_cpu_us() - cpu_start) / ops};
}

/// This thread's CPU time in nanoseconds (not wall time: on a loaded machine the thread is
/// preempted, which wall time would count).
/// CPU nanoseconds per lane-event hook (as devices call it), over `n` calls: disabled or recording.
double hook_ns(long long n) {
  am::device d{};
  const double start = am::bench::thread_cpu_ns();
  for (long long i = 0; i < n; ++i)
    am::observability::trace_lane(d, "admit", static_cast<std::uint64_t>(i));
  return (am::bench::thread_cpu_ns() - start) / static_cast<double>(n);
}

/// Wall milliseconds of what one periodic flush (AM_TRACE_FLUSH_SECONDS) does once a long run has
/// filled the trace's budget of 2^20 events: collect every buffer, write the JSON, write the file
/// (the flush rewrites the whole file each time). Also the size of that file.
std::pair<double, std::uintmax_t> full_flush_ms(const std::string& path) {
  am::start_trace(path);
  am::device d{};
  for (long long i = 0; i < (1LL << 20) + 1000; ++i) // past the budget: the rest is dropped
    am::observability::trace_lane(d, "admit", static_cast<std::uint64_t>(i));
  const auto start = clock_type::now();
  const auto why = am::observability::write_text_file(
    path, am::observability::trace_json(am::observability::collect(), am::observability::trace_process_info{}));
  const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
  const auto bytes = why.empty() ? std::filesystem::file_size(path) : 0;
  am::stop_trace();
  std::filesystem::remove(path);
  return {ms, bytes};
}

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "what recording a trace costs dispatch and completion, trace off against on");
  const int ops = static_cast<int>(flag.integer("--ops", 20000, "operations per round"));
  const int rounds = static_cast<int>(flag.integer("--rounds", 7, "timed rounds"));
  flag.finish();
  am::runtime rt;
  auto tiny = am::bench::tiny_sharded_array();
  const auto n = static_cast<std::int64_t>(tiny.addressable_shards().size());
  const auto path = (std::filesystem::temp_directory_path() / ("am_bench_trace_" + std::to_string(::getpid()) + ".json"))
                      .string();
  run_ops(tiny, ops); // warm-up
  std::vector<double> off_d, on_d, off_c, on_c, off_cpu, on_cpu;
  std::uint64_t kept = 0;
  std::vector<double> ratios;
  for (int r = 0; r < rounds; ++r) {
    // Alternating which goes first, so neither gains from the other's warm caches or quiet moment.
    measure off{}, on{};
    if (r % 2 == 0)
      off = run_ops(tiny, ops);
    am::start_trace(path);
    on = run_ops(tiny, ops);
    am::stop_trace();
    if (r % 2 == 1)
      off = run_ops(tiny, ops);
    ratios.push_back(on.dispatch_us / off.dispatch_us);
    off_cpu.push_back(off.cpu_us);
    on_cpu.push_back(on.cpu_us);
    off_d.push_back(off.dispatch_us);
    off_c.push_back(off.complete_us);
    on_d.push_back(on.dispatch_us);
    on_c.push_back(on.complete_us);
    kept = std::filesystem::file_size(path);
  }
  std::filesystem::remove(path);
  const double hook = hook_ns(50'000'000);
  // One recorded lane event, timed alone: first into fresh buffers (page faults included), then into
  // the buffers of the last session (reused).
  double fresh = 0, recorded = 0;
  for (double* into : {&fresh, &recorded}) {
    am::start_trace(path);
    *into = hook_ns(500'000);
    am::stop_trace();
  }
  std::filesystem::remove(path);
  const auto [flush_ms, flush_bytes] = full_flush_ms(path);
  auto med = [](const std::vector<double>& v) { return am::bench::percentile(v, 0.5); };
  fmt::print("trace benchmark: tiny op (x + 1) on {} shards, {} ops a round, {} rounds, off and on interleaved\n", n,
             ops, rounds);
  fmt::print("  dispatch (caller side), untraced: {:.2f} us per op\n", med(off_d));
  fmt::print("  dispatch, traced:                 {:.2f} us per op  ratio {:.3f}x (target <= 1.05x: {})\n", med(on_d),
             med(on_d) / med(off_d), med(on_d) <= 1.05 * med(off_d) ? "met" : "missed");
  am::bench::ratio_line(med(on_d) / med(off_d), "dispatch cost: traced / untraced (target <= 1.05)");
  fmt::print("  dispatch ratio per round:");
  for (double x : ratios)
    fmt::print(" {:.3f}", x);
  fmt::print("  (median {:.3f}x)\n", med(ratios));
  fmt::print("  to completion, untraced:          {:.2f} us per op\n", med(off_c));
  fmt::print("  to completion, traced:            {:.2f} us per op  ratio {:.3f}x\n", med(on_c), med(on_c) / med(off_c));
  fmt::print("  CPU of all threads per op, untraced: {:.2f} us, traced: {:.2f} us  ratio {:.3f}x (target <= 1.05x: {})\n",
             med(off_cpu), med(on_cpu), med(on_cpu) / med(off_cpu), med(on_cpu) <= 1.05 * med(off_cpu) ? "met" : "missed");
  // Per operation: a dispatch span and a send per shard on the caller, an admit and a program span
  // per shard on the devices.
  const double hooks_per_op = 4.0 * static_cast<double>(n);
  fmt::print("  a disabled hook: {:.2f} ns (thread CPU time); {} hooks per op = {:.4f} us, ratio {:.4f}x of the untraced dispatch\n", hook,
             hooks_per_op, hook * hooks_per_op / 1000, 1 + hook * hooks_per_op / 1000 / med(off_d));
  // Recorded, each operation costs its events: per shard a dispatch span (with its arrow's start),
  // an admit and a program span (with its end), plus the sends that were not coalesced.
  fmt::print("  a recorded lane event (thread CPU time): {:.1f} ns into fresh buffers, {:.1f} ns into reused ones; about {} events per op = {:.3f} us, {:.1f}% of the untraced dispatch\n",
             fresh, recorded, 3 * n, recorded * 3.0 * static_cast<double>(n) / 1000,
             100 * recorded * 3.0 * static_cast<double>(n) / 1000 / med(off_d));
  fmt::print("  last trace file: {} bytes\n", kept);
  fmt::print("  one flush of a full trace (2^20 events, {} bytes): {:.0f} ms, {:.1f}% of one core at the 10 s interval "
             "(AM_TRACE_FLUSH_SECONDS) while events still come; none once the budget is spent\n",
             flush_bytes, flush_ms, flush_ms / 100.0);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  return am::bench::guarded_main("bench_trace", run, argc, argv);
}
