// Live counters benchmark: what am::runtime_stats()'s counting costs a call. Each
// device call adds to two relaxed atomic counters (the caller's `queued`, the device's `executed`,
// on cache lines of their own) after a lock-free table look-up. Their CPU cost per call is measured
// alone, single-threaded and with 4 threads adding to one device's counter, and set against the
// dispatch cost of a tiny operation on an 8-shard array (8 device calls) measured in the same run.
// A snapshot's cost is printed too.
//
//   ./build/bench/bench_stats [--ops 20000] [--calls 20000000]
#include <actormesh.hpp>

#include "bench_dispatch.hpp"
#include "bench_flags.hpp"
#include "bench_report.hpp"
#include "observability/stats_counters.hpp"

#include <fmt/core.h>

#include <chrono>
#include <ctime>
#include <thread>
#include <vector>

namespace {

/// CPU nanoseconds of the calling thread.
/// CPU ns per counted call (look-up, queued add, executed add) over `calls` calls on `devices` ids.
double count_ns(long long calls, int devices) {
  const double start = am::bench::thread_cpu_ns();
  for (long long i = 0; i < calls; ++i) {
    auto* c = am::detail::stats::device(static_cast<int>(i % devices));
    c->queued.fetch_add(1, std::memory_order_relaxed);
    c->executed.fetch_add(1, std::memory_order_relaxed);
  }
  return (am::bench::thread_cpu_ns() - start) / static_cast<double>(calls);
}

} // namespace

int main(int argc, char** argv) {
  return am::bench::guarded_main("bench_stats", [](int c, char** v) {
    am::bench::flags flag(c, v, "what the live counters (am::runtime_stats) cost a device call");
    const int ops = static_cast<int>(flag.integer("--ops", 20000, "operations per round"));
    const long long calls = flag.integer("--calls", 20'000'000, "counter updates timed alone");
    flag.finish();
    am::runtime rt;
    auto tiny = am::bench::tiny_sharded_array();
    const auto n = static_cast<std::int64_t>(tiny.addressable_shards().size());
    double issue_s = 0;
    am::array last = tiny;
    double per_round = am::bench::median_seconds(7, [&] {
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < ops; ++i)
        last = tiny + 1.0f;
      issue_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      last.block_until_ready();
    });
    const double dispatch_ns = issue_s / ops * 1e9; // the last round's caller side
    const double alone = count_ns(calls, static_cast<int>(n));
    std::vector<double> shared(4);
    std::vector<std::thread> threads;
    for (auto& s : shared)
      threads.emplace_back([&s, calls] { s = count_ns(calls / 4, 1); });
    for (auto& t : threads)
      t.join();
    const double contended = am::bench::percentile(shared, 0.5);
    const double snap_start = am::bench::thread_cpu_ns();
    for (int i = 0; i < 10000; ++i)
      (void)am::runtime_stats();
    const double snapshot_us = (am::bench::thread_cpu_ns() - snap_start) / 10000 / 1e3;
    fmt::print("live counters benchmark: tiny op (x + 1) on {} shards, {} ops a round (loaded machine unless said)\n", n,
               ops);
    fmt::print("  dispatch (caller side): {:.0f} ns per op; whole op to ready: {:.0f} ns\n", dispatch_ns,
               per_round / ops * 1e9);
    fmt::print("  counting, one thread: {:.1f} ns per call, {:.1f} ns per op ({} calls) = {:.2f}% of dispatch\n", alone,
               alone * static_cast<double>(n), n, 100 * alone * static_cast<double>(n) / dispatch_ns);
    fmt::print("  counting, 4 threads on one device's counters: {:.1f} ns per call (median thread)\n", contended);
    fmt::print("  runtime_stats() snapshot: {:.1f} us of CPU\n", snapshot_us);
    return 0;
  }, argc, argv);
}
