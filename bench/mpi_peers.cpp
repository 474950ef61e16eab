// The Open MPI peers of the cluster benchmarks, run by bench/run_cluster_bench.sh
// in the same run as the actormesh figures they anchor:
//
//   mpi_peers barrier [--warmup W] [--warmup-ms T] [--rounds R]
//                                                       MPI_Barrier, rank 0 times each one back to
//                                                       back: median and 10th/90th percentiles,
//                                                       against bench_cluster_barrier
//   mpi_peers allreduce [--mib M] [--warmup W] [--rounds R]
//                                                       MPI_Allreduce of M MiB float32 (sum), rank 0
//                                                       times each one back to back: bus bandwidth
//                                                       (algbw x 2(n-1)/n, as nccl-tests define it),
//                                                       against bench_cluster_allreduce
//   mpi_peers send [--mib M] [--warmup W] [--rounds R]
//                                                       MPI_Send of M MiB from rank 0 to rank 1 (2
//                                                       ranks), rank 1 times each MPI_Recv posted
//                                                       right after the last: throughput, against
//                                                       bench_cluster_transfer
//   mpi_peers allgather [--bytes B] [--warmup W] [--rounds R]
//   mpi_peers bcast [--bytes B] [--warmup W] [--rounds R]
//   mpi_peers sum [--bytes B] [--warmup W] [--rounds R]
//                                                       MPI_Allgather (MPI_Bcast from rank 0) of B
//                                                       bytes per rank, every rank times each one
//                                                       after an untimed barrier, rank 0 prints the slowest
//                                                       rank's median and 10th/90th percentiles,
//                                                       against
//                                                       bench_multihost_utils (run_multihost_bench.sh)
//
// The transport is chosen on mpirun's command line: `--mca pml ob1 --mca btl tcp,self` (TCP over
// loopback, the peer of Gloo's TCP transport) or `--mca pml ob1 --mca btl vader,self` (shared
// memory). ob1 is named because Debian's Open MPI also has UCX, which would ignore the btl list.
// Open MPI needs MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=17179869184 (its large all-reduces are
// much faster once glibc keeps freed memory: doc/performance.md, "Cluster"); the
// driver gives every process, ours too, the same environment. Buffers are allocated and touched
// once and reused, as in the actormesh programs, and the result is checked.
//
//   mpirun --allow-run-as-root --oversubscribe -np 4 --mca pml ob1 --mca btl tcp,self ./build/bench/mpi_peers allreduce
#include "bench_flags.hpp"
#include "bench_report.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using am::bench::percentile;

int barrier(int argc, char** argv, int rank, int n) {
  am::bench::flags flag(argc, argv, "mpi_peers barrier: MPI_Barrier across the ranks");
  long long warmup = flag.integer("--warmup", 200, "untimed rounds first, at least");
  long long warmup_ms = flag.integer("--warmup-ms", 300, "warm up until rank 0 has spent this long in it");
  long long rounds = std::max(1LL, flag.integer("--rounds", 2000, "timed rounds"));
  flag.finish();
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(rounds));
  // The warm-up of bench_cluster_barrier: at least `warmup` rounds and `warmup_ms` on rank 0's
  // clock, which rank 0 announces every 100 rounds.
  const double warm_start = MPI_Wtime();
  for (long long k = 1;; ++k) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (k >= warmup && k % 100 == 0) {
      int warm = (MPI_Wtime() - warm_start) * 1e3 >= static_cast<double>(warmup_ms) ? 1 : 0;
      MPI_Bcast(&warm, 1, MPI_INT, 0, MPI_COMM_WORLD);
      if (warm != 0)
        break;
    }
  }
  for (long long k = 0; k < rounds; ++k) {
    double start = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
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
  am::bench::flags flag(argc, argv, "mpi_peers allreduce: a float32 sum MPI_Allreduce across the ranks");
  long long mib = std::max(1LL, flag.integer("--mib", 64, "MiB per operation"));
  long long warmup = flag.integer("--warmup", 3, "untimed rounds first");
  long long rounds = std::max(1LL, flag.integer("--rounds", 10, "timed rounds"));
  flag.finish();
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

/// M MiB from rank 0 to rank 1, as bench_cluster_transfer moves them with a communicator's
/// send/recv: the receiver times each MPI_Recv, posted right after the last returned (so the time
/// covers the sender's turnaround too); the last transfer's bytes are checked.
int send(int argc, char** argv, int rank, int n) {
  am::bench::flags flag(argc, argv, "mpi_peers send: M MiB from rank 0 to rank 1 with MPI_Send/MPI_Recv");
  long long mib = std::max(1LL, flag.integer("--mib", 256, "MiB per operation"));
  long long warmup = flag.integer("--warmup", 2, "untimed rounds first");
  long long rounds = std::max(1LL, flag.integer("--rounds", 8, "timed rounds"));
  flag.finish();
  if (n != 2)
    throw std::invalid_argument("mpi_peers send runs on exactly 2 ranks");
  const std::size_t count = static_cast<std::size_t>(mib) << 20;
  std::vector<std::uint8_t> buffer(count);
  for (std::size_t i = 0; i < count; ++i)
    buffer[i] = rank == 0 ? am::bench::transfer_pattern(i) : 0;
  // MPI's counts are ints: the bytes go as 1 MiB elements of a contiguous type.
  MPI_Datatype mebibyte;
  MPI_Type_contiguous(1 << 20, MPI_BYTE, &mebibyte);
  MPI_Type_commit(&mebibyte);
  std::vector<double> seconds;
  for (long long k = 0; k < warmup + rounds; ++k) {
    double start = MPI_Wtime();
    if (rank == 0)
      MPI_Send(buffer.data(), static_cast<int>(mib), mebibyte, 1, 0, MPI_COMM_WORLD);
    else
      MPI_Recv(buffer.data(), static_cast<int>(mib), mebibyte, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (k >= warmup)
      seconds.push_back(MPI_Wtime() - start);
  }
  MPI_Type_free(&mebibyte);
  if (rank != 1)
    return 0;
  const bool right = am::bench::holds_transfer_pattern(buffer);
  am::bench::report_transfer("MPI_Send/MPI_Recv", "mpi_send_gbs", count, seconds, right);
  return right ? 0 : 1;
}

/// MPI_Allgather ("allgather") or MPI_Bcast from rank 0 ("bcast") of `--bytes` bytes per rank:
/// the peers of process_allgather and broadcast_one_to_all; or MPI_Allreduce ("sum") of the whole
/// float32s in `--bytes`, the peer of a communicator's all_reduce of the same. Buffers are touched
/// once and reused; the result is checked (row r of a gather holds r + 1, a broadcast holds rank
/// 0's 1, a sum n(n + 1) / 2).
int bytes_collective(const std::string& mode, int argc, char** argv, int rank, int n) {
  am::bench::flags flag(argc, argv, "mpi_peers allgather|bcast|sum: MPI_Allgather, MPI_Bcast from rank 0 or a float32 MPI_Allreduce of --bytes per rank");
  const auto bytes = static_cast<std::size_t>(std::max(1LL, flag.integer("--bytes", 1024, "bytes per operation")));
  const bool large = bytes >= (1u << 20);
  long long warmup = flag.integer("--warmup", large ? 2 : 50, "untimed rounds first");
  long long rounds = std::max(1LL, flag.integer("--rounds", large ? 10 : 500, "timed rounds"));
  flag.finish();
  const bool gather = mode == "allgather";
  const bool sum = mode == "sum";
  const std::size_t floats = std::max<std::size_t>(1, bytes / sizeof(float));
  std::vector<float> addend(sum ? floats : 0, static_cast<float>(rank + 1)), total(addend.size());
  std::vector<unsigned char> in(bytes, static_cast<unsigned char>(rank + 1));
  std::vector<unsigned char> out(gather ? bytes * static_cast<std::size_t>(n) : 0, 0);
  std::vector<double> us;
  for (long long k = 0; k < warmup + rounds; ++k) {
    // As the OSU benchmarks do: a barrier (not timed) before each call, so that a root which
    // returns once its bytes are sent cannot run ahead and time its sends back to back.
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    if (sum)
      MPI_Allreduce(addend.data(), total.data(), static_cast<int>(floats), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else if (gather)
      MPI_Allgather(in.data(), static_cast<int>(bytes), MPI_BYTE, out.data(), static_cast<int>(bytes), MPI_BYTE,
                    MPI_COMM_WORLD);
    else
      MPI_Bcast(in.data(), static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (k >= warmup)
      us.push_back((MPI_Wtime() - start) * 1e6);
  }
  bool right = true;
  if (sum) {
    right = std::all_of(total.begin(), total.end(), [n](float v) { return v == static_cast<float>(n * (n + 1) / 2); });
  } else if (gather) {
    for (int r = 0; r < n; ++r)
      right = right && std::all_of(out.begin() + static_cast<std::ptrdiff_t>(r * bytes),
                                   out.begin() + static_cast<std::ptrdiff_t>((r + 1) * bytes),
                                   [r](unsigned char v) { return v == r + 1; });
  } else {
    right = std::all_of(in.begin(), in.end(), [](unsigned char v) { return v == 1; });
  }
  // Each figure is the slowest rank's (a broadcast's root returns once its bytes are sent).
  double mine[3] = {percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9)}, worst[3] = {0, 0, 0};
  MPI_Reduce(mine, worst, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    const double med = worst[0], p10 = worst[1], p90 = worst[2];
    const double received = sum ? static_cast<double>(floats * sizeof(float)) : static_cast<double>(bytes) * (gather ? n - 1 : 1);
    std::printf("%s, %d ranks, %zu bytes, %lld rounds: median %.1f us (p10 %.1f, p90 %.1f), %.3f GB/s received per "
                "rank, result %s\n", sum ? "MPI_Allreduce (float32 sum)" : gather ? "MPI_Allgather" : "MPI_Bcast", n, bytes, rounds, med, p10, p90,
                received / (med * 1e-6) / 1e9, right ? "right" : "WRONG");
    const std::string key = sum ? "mpi_sum" : gather ? "mpi_allgather" : "mpi_bcast";
    std::printf("RESULT %s_us %.2f\nRESULT %s_p10_us %.2f\nRESULT %s_p90_us %.2f\nRESULT %s_gbs %.4f\n", key.c_str(),
                med, key.c_str(), p10, key.c_str(), p90, key.c_str(), received / (med * 1e-6) / 1e9);
  }
  return right ? 0 : 1;
}

} // namespace

int run(int argc, char** argv) {
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
  else if (mode == "send")
    rc = send(argc, argv, rank, n);
  else if (mode == "allgather" || mode == "bcast" || mode == "sum")
    rc = bytes_collective(mode, argc, argv, rank, n);
  else if (rank == 0)
    std::fprintf(stderr, "usage: mpi_peers barrier|allreduce|send|allgather|bcast|sum [--mib M] [--bytes B] [--warmup W] [--rounds R]\n");
  std::fflush(stdout);
  MPI_Finalize();
  return rc;
}

int main(int argc, char** argv) { return am::bench::guarded_main("mpi_peers", run, argc, argv); }
