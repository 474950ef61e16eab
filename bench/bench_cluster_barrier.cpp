// Cluster barrier benchmark: the time of one am::distributed::wait_at_barrier
// across every process of the cluster, the figure MPI_Barrier is compared against
// (bench/mpi_peers.cpp barrier, run side by side by bench/run_cluster_bench.sh).
//
// A barrier is one request from every process to the mesh supervisor on process 0 and one answer
// back to each once all have arrived, so it measures the control path: user thread -> CAF
// middleman -> supervisor actor -> middleman -> the cluster client actor -> the waiting thread.
// Process 0 times every barrier back to back (R rounds after W warm-up rounds) and prints the
// median and the 10th/90th percentiles; every process runs the same loop.
//
//   actormesh launch -n 4 --cpu-devices 1 -- ./build/bench/bench_cluster_barrier [--warmup W] [--rounds R]
#include <actormesh.hpp>

#include "bench_flags.hpp"
#include "bench_report.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <vector>

namespace {

using am::bench::percentile;

using clock_type = std::chrono::steady_clock;

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "one am::distributed::wait_at_barrier across every process, in microseconds");
  auto warmup = flag.integer("--warmup", 200, "untimed rounds first");
  auto rounds = std::max<long long>(1, flag.integer("--rounds", 2000, "timed rounds"));
  flag.finish();
  am::runtime rt(argc, argv);
  int n = am::process_count();
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(rounds));
  for (long long k = 0; k < warmup + rounds; ++k) {
    auto start = clock_type::now();
    am::distributed::wait_at_barrier("bench barrier", std::chrono::seconds(10));
    if (k >= warmup)
      us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
  }
  if (am::process_index() == 0) {
    std::printf("actormesh barrier, %d processes, %lld rounds: median %.1f us, p10 %.1f, p90 %.1f\n", n, rounds,
                percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9));
    // Machine-readable lines for bench/run_cluster_bench.sh.
    std::printf("RESULT am_barrier_us %.2f\nRESULT am_barrier_p10_us %.2f\nRESULT am_barrier_p90_us %.2f\n",
                percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9));
    std::fflush(stdout);
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_cluster_barrier", run, argc, argv); }
