// Cluster all-reduce benchmark: a float32 sum all-reduce of --mib MiB (64 by
// default) across every process of the cluster with am::communicator (Gloo over loopback TCP),
// reported as bus bandwidth the way nccl-tests define it: algorithm bandwidth (bytes / time) times
// 2(n-1)/n, the share of the data every rank must send and receive in a ring. Its peer is
// MPI_Allreduce on the same bytes (bench/mpi_peers.cpp allreduce), run side by side by
// bench/run_cluster_bench.sh over TCP and over shared memory.
//
// Both buffers are allocated and touched once before the warm-up, and reused: the first write to a
// fresh page costs a page fault (doc/architecture.md, "CPU programs"), which would otherwise dominate. Rank 0
// times every operation back to back (the ring keeps the ranks in step) and prints the median and
// range; the result is checked (every element must equal n) so a broken run cannot look fast.
//
//   MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=17179869184 actormesh launch -n 4 --cpu-devices 1 -- ./build/bench/bench_cluster_allreduce [--mib M] [--warmup W] [--rounds R]
#include <actormesh.hpp>

#include "bench_flags.hpp"
#include "bench_report.hpp"
#include "actormesh/devices/collectives/communicator.hpp"
#include "devices/detail/runtime_impl.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <numeric>
#include <vector>

namespace {

using am::bench::percentile;

using clock_type = std::chrono::steady_clock;

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "a float32 sum all-reduce across every process (am::communicator over Gloo), as bus bandwidth");
  auto mib = std::max<long long>(1, flag.integer("--mib", 64, "MiB per operation"));
  auto warmup = flag.integer("--warmup", 3, "untimed rounds first");
  auto rounds = std::max<long long>(1, flag.integer("--rounds", 10, "timed rounds"));
  flag.finish();
  am::runtime rt(argc, argv);
  int n = am::process_count();
  std::vector<int> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  am::communicator comm(am::detail::current_runtime()->cluster(), all, "bench all_reduce");
  std::size_t count = static_cast<std::size_t>(mib) * (1 << 20) / sizeof(float);
  std::vector<float> in(count, 1.0f), out(count, 0.0f);
  std::vector<double> seconds;
  for (long long k = 0; k < warmup + rounds; ++k) {
    auto start = clock_type::now();
    comm.all_reduce(in.data(), out.data(), count, am::dtype::float32, am::reduce_op::sum);
    if (k >= warmup)
      seconds.push_back(std::chrono::duration<double>(clock_type::now() - start).count());
  }
  bool right = std::all_of(out.begin(), out.end(), [n](float v) { return v == static_cast<float>(n); });
  if (comm.rank() == 0) {
    double bytes = static_cast<double>(count * sizeof(float));
    double factor = 2.0 * (n - 1) / n;
    auto busbw = [&](double s) { return bytes / s * factor / 1e9; };
    double med = percentile(seconds, 0.5);
    std::printf("actormesh all_reduce (Gloo), %d processes, %lld MiB float32, %lld rounds: median %.2f ms, "
                "bus bandwidth %.3f GB/s (range %.3f-%.3f), result %s\n",
                n, mib, rounds, med * 1e3, busbw(med), busbw(percentile(seconds, 1.0)),
                busbw(percentile(seconds, 0.0)), right ? "right" : "WRONG");
    std::printf("RESULT am_allreduce_busbw %.4f\nRESULT am_allreduce_ms %.3f\n", busbw(med), med * 1e3);
    std::fflush(stdout);
  }
  return right ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_cluster_allreduce", run, argc, argv); }
