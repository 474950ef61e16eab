// The Open MPI peers of the cluster benchmarks (issue 7, item 10), run by bench/run_cluster_bench.sh
// in the same run as the actormesh figures they anchor:
//
//   mpi_peers barrier [--warmup W] [--rounds R]         MPI_Barrier, rank 0 times each one back to
//                                                       back: median and 10th/90th percentiles,
//                                                       against bench_cluster_barrier
//   mpi_peers allreduce [--mib M] [--warmup W] [--rounds R]
//                                                       MPI_Allreduce of M MiB float32 (sum), rank 0
//                                                       times each one back to back: bus bandwidth
//                                                       (algbw x 2(n-1)/n, as nccl-tests define it),
//                                                       against bench_cluster_allreduce
//
// The transport is chosen on mpirun's command line: `--mca pml ob1 --mca btl tcp,self` (TCP over
// loopback, the peer of Gloo's TCP transport) or `--mca pml ob1 --mca btl vader,self` (shared
// memory). ob1 is named because Debian's Open MPI also has UCX, which would ignore the btl list.
// Open MPI needs MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=17179869184 on this VM (its 64 MiB
// all-reduce goes from 311 ms to 16 ms once glibc keeps freed memory; DESIGN.md section 7); the
// driver gives every process, ours too, the same environment. Buffers are allocated and touched
// once and reused, as in the actormesh programs, and the result is checked.
//
//   mpirun --allow-run-as-root --oversubscribe -np 4 --mca pml ob1 --mca btl tcp,self ./build/bench/mpi_peers allreduce
#include "bench_report.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using am::bench::percentile;

long long int_flag(int argc, char** argv, const char* name, long long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0)
      return std::atoll(argv[i + 1]);
  return fallback;
}


int barrier(int argc, char** argv, int rank, int n) {
  long long warmup = int_flag(argc, argv, "--warmup", 200);
  long long rounds = std::max(1LL, int_flag(argc, argv, "--rounds", 2000));
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(rounds));
  for (long long k = 0; k < warmup + rounds; ++k) {
    double start = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    if (k >= warmup)
      us.push_back((MPI_Wtime() - start) * 1e6);
  }
  if (rank == 0) {
    std::printf("MPI_Barrier, %d ranks, %lld rounds: median %.1f us, p10 %.1f, p90 %.1f\n", n, rounds,
                percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9));
    std::printf("RESULT mpi_barrier_us %.2f\nRESULT mpi_barrier_p10_us %.2f\nRESULT mpi_barrier_p90_us %.2f\n",
                percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9));
  }
  return 0;
}

int allreduce(int argc, char** argv, int rank, int n) {
  long long mib = std::max(1LL, int_flag(argc, argv, "--mib", 64));
  long long warmup = int_flag(argc, argv, "--warmup", 3);
  long long rounds = std::max(1LL, int_flag(argc, argv, "--rounds", 10));
  std::size_t count = static_cast<std::size_t>(mib) * (1 << 20) / sizeof(float);
  std::vector<float> in(count, 1.0f), out(count, 0.0f);
  std::vector<double> seconds;
  for (long long k = 0; k < warmup + rounds; ++k) {
    double start = MPI_Wtime();
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (k >= warmup)
      seconds.push_back(MPI_Wtime() - start);
  }
  bool right = std::all_of(out.begin(), out.end(), [n](float v) { return v == static_cast<float>(n); });
  if (rank == 0) {
    double bytes = static_cast<double>(count * sizeof(float));
    double factor = 2.0 * (n - 1) / n;
    auto busbw = [&](double s) { return bytes / s * factor / 1e9; };
    double med = percentile(seconds, 0.5);
    std::printf("MPI_Allreduce, %d ranks, %lld MiB float32, %lld rounds: median %.2f ms, bus bandwidth %.3f GB/s "
                "(range %.3f-%.3f), result %s\n",
                n, mib, rounds, med * 1e3, busbw(med), busbw(percentile(seconds, 1.0)), busbw(percentile(seconds, 0.0)),
                right ? "right" : "WRONG");
    std::printf("RESULT mpi_allreduce_busbw %.4f\nRESULT mpi_allreduce_ms %.3f\n", busbw(med), med * 1e3);
  }
  return right ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  std::string mode = argc > 1 ? argv[1] : "";
  int rc = 2;
  if (mode == "barrier")
    rc = barrier(argc, argv, rank, n);
  else if (mode == "allreduce")
    rc = allreduce(argc, argv, rank, n);
  else if (rank == 0)
    std::fprintf(stderr, "usage: mpi_peers barrier|allreduce [--mib M] [--warmup W] [--rounds R]\n");
  std::fflush(stdout);
  MPI_Finalize();
  return rc;
}
