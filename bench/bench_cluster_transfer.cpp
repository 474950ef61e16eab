// Shard transfer benchmark: --mib MiB (256 by default) moved from process 0 to process 1 with
// am::communicator's send/recv, the path bulk shard transfers between processes take: over UCX's
// shared memory when both processes run on this machine (one copy), over Gloo's TCP pair otherwise
// (AM_COLLECTIVE_CHECKS=tcp forces that path here). Its peers are plain loopback TCP
// (bench/tcp_peer.cpp: one process writes the bytes to a socket, the other reads them), run side
// by side by bench/run_cluster_bench.sh, and MPI_Send/MPI_Recv (bench/mpi_peers.cpp send), run by
// bench/run_collectives_matrix.sh.
//
// The receiver times each recv call (it is posted right after the previous one returned, so the
// time covers the sender's turnaround as the TCP peer's "go" byte does) and prints the median
// throughput and range. Buffers are allocated and touched once and reused (the first touch of a
// fresh page is a page fault); the last transfer's bytes are checked.
//
//   MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=17179869184 actormesh launch -n 2 --cpu-devices 1 -- ./build/bench/bench_cluster_transfer [--mib M] [--warmup W] [--rounds R]
#include <actormesh.hpp>

#include "bench_flags.hpp"
#include "bench_report.hpp"
#include "actormesh/devices/collectives/communicator.hpp"
#include "devices/detail/runtime_impl.hpp"

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
  am::bench::flags flag(argc, argv, "a shard moved from process 0 to process 1 with am::communicator send/recv");
  auto mib = std::max<long long>(1, flag.integer("--mib", 256, "MiB per operation"));
  auto warmup = flag.integer("--warmup", 2, "untimed rounds first");
  auto rounds = std::max<long long>(1, flag.integer("--rounds", 8, "timed rounds"));
  flag.finish();
  am::runtime rt(argc, argv);
  if (am::process_count() != 2)
    throw am::value_error("bench_cluster_transfer runs on exactly 2 processes");
  am::communicator comm(am::detail::current_runtime()->cluster(), {0, 1}, "bench transfer");
  std::size_t count = static_cast<std::size_t>(mib) << 20;
  std::vector<std::uint8_t> buffer(count);
  for (std::size_t i = 0; i < count; ++i)
    buffer[i] = comm.rank() == 0 ? am::bench::transfer_pattern(i) : 0;
  std::vector<double> seconds;
  for (long long k = 0; k < warmup + rounds; ++k) {
    auto start = clock_type::now();
    if (comm.rank() == 0)
      comm.send(buffer.data(), count, am::dtype::uint8, 1);
    else
      comm.recv(buffer.data(), count, am::dtype::uint8, 0);
    if (k >= warmup)
      seconds.push_back(std::chrono::duration<double>(clock_type::now() - start).count());
  }
  if (comm.rank() == 1) {
    const bool right = am::bench::holds_transfer_pattern(buffer);
    am::bench::report_transfer("actormesh send/recv", "am_transfer_gbs", count, seconds, right);
    return right ? 0 : 1;
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_cluster_transfer", run, argc, argv); }
