// Cluster barrier benchmark: the time of one am::distributed::wait_at_barrier
// across every process of the cluster, the figure MPI_Barrier is compared against
// (bench/mpi_peers.cpp barrier, run side by side by bench/run_cluster_bench.sh).
//
// The first barrier meets at the mesh supervisor; every later one is a step of the world
// communicator whose participants check each other (doc/architecture.md, "How a collective
// flows"). Process 0 times every barrier back to back (R rounds after the warm-up) and prints the
// median and the 10th/90th percentiles; every process runs the same loop. The warm-up is at least
// W rounds and lasts until process 0 has spent T ms in it (it tells the others, every 100 rounds):
// in the first tens of milliseconds after start, Linux often runs two processes' waiting threads on
// one core and a barrier costs a context switch (11-12 us against 1.5-2 at 2 processes here); the
// figure wanted is the steady state, as MPI's (bench/mpi_peers.cpp warms up alike).
//
//   actormesh launch -n 4 --cpu-devices 1 -- ./build/bench/bench_cluster_barrier [--warmup W] [--warmup-ms T] [--rounds R]
#include <actormesh.hpp>

#include "bench_flags.hpp"
#include "bench_report.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <vector>

namespace {

using am::bench::percentile;

using clock_type = std::chrono::steady_clock;

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "one am::distributed::wait_at_barrier across every process, in microseconds");
  auto warmup = flag.integer("--warmup", 200, "untimed rounds first, at least");
  auto warmup_ms = flag.integer("--warmup-ms", 300, "warm up until process 0 has spent this long in it");
  auto rounds = std::max<long long>(1, flag.integer("--rounds", 2000, "timed rounds"));
  flag.finish();
  am::runtime rt(argc, argv);
  int n = am::process_count();
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(rounds));
  const auto warm_start = clock_type::now();
  for (long long k = 1;; ++k) {
    am::distributed::wait_at_barrier("bench barrier", std::chrono::seconds(10));
    if (k >= warmup && k % 100 == 0) {
      const bool warm = clock_type::now() - warm_start >= std::chrono::milliseconds(warmup_ms);
      if (am::multihost::broadcast_one_to_all(std::int32_t{warm ? 1 : 0}) != 0) // process 0's say
        break;
    }
  }
  for (long long k = 0; k < rounds; ++k) {
    auto start = clock_type::now();
    am::distributed::wait_at_barrier("bench barrier", std::chrono::seconds(10));
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
