// Multihost utilities benchmark: am::multihost::process_allgather and broadcast_one_to_all of a
// uint8[--bytes] host array (1 KiB and 64 MiB in the driver) across every process of the cluster,
// and the same bytes through a communicator of our own (the collectives engine alone, without the
// utilities' tree agreement), as a decomposition, with a float32 sum all-reduce of the same bytes. The peers are MPI_Allgather and MPI_Bcast of the
// same bytes (bench/mpi_peers.cpp allgather|bcast), run side by side by
// bench/run_multihost_bench.sh over TCP.
//
// Every process times every call back to back (collectives keep the processes in step); rank 0
// prints the slowest process's median and 10th/90th percentiles in microseconds (a broadcast's root
// may return before the others have the bytes), and the bandwidth at the median (bytes each process
// receives / time: (P-1) x bytes for a gather, bytes for a broadcast). The input is allocated and
// touched once and reused (a fresh page costs a page fault when first touched: doc/architecture.md,
// "CPU programs"); the utilities allocate their outputs, as JAX's do. Results are checked: a
// gathered row r must hold r + 1 everywhere, a broadcast value 1 (process 0's), so a broken run
// cannot look fast.
//
//   MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=17179869184 actormesh launch -n 4 --cpu-devices 1 -- ./build/bench/bench_multihost_utils --bytes 1024 [--warmup W] [--rounds R]
#include <actormesh.hpp>

#include "bench_flags.hpp"
#include "bench_cluster_timing.hpp"
#include "bench_report.hpp"
#include "observability/flight_recorder.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

namespace mh = am::multihost;
using am::bench::percentile;
using am::bench::time_calls;

/// True when every byte of `bytes` equals `value`.
bool all_equal(const std::byte* bytes, std::size_t n, std::uint8_t value) {
  return std::all_of(bytes, bytes + n, [value](std::byte b) { return std::to_integer<std::uint8_t>(b) == value; });
}

/// Where the engine's time goes, from this process's flight recorder: the median time from issue
/// to the participants' check passing (queue + fingerprint exchange) and from there to the end (Gloo),
/// over the recorded `op` entries of communicator `comm`.
void report_phases(const char* what, const std::string& key, const std::string& comm, const std::string& op,
                   const std::string& shape = "") {
  std::vector<double> check, move;
  for (auto& e : am::observability::process_flight_recorder().entries())
    if (e.communicator == comm && e.op == op && e.state == am::observability::op_state::completed
        && (shape.empty() || e.shape == shape)) {
      check.push_back(static_cast<double>(e.checked_us - e.issued_us));
      move.push_back(static_cast<double>(e.ended_us - e.checked_us));
    }
  if (check.empty())
    return;
  std::printf("%s: issue to check passed %.1f us, check to end %.1f us (medians of %zu recorded)\n", what,
              percentile(check, 0.5), percentile(move, 0.5), check.size());
  std::printf("RESULT %s_check_us %.2f\nRESULT %s_move_us %.2f\n", key.c_str(), percentile(check, 0.5), key.c_str(),
              percentile(move, 0.5));
}

/// Rank 0's line and RESULT lines: "<key>_us", "<key>_p10_us", "<key>_p90_us", "<key>_gbs".
void report(const char* what, const std::string& key, const std::vector<double>& us, double received_bytes,
            bool right) {
  using am::bench::slowest_of_processes;
  const double med = slowest_of_processes(percentile(us, 0.5)), p10 = slowest_of_processes(percentile(us, 0.1)),
               p90 = slowest_of_processes(percentile(us, 0.9));
  const double gbs = received_bytes / (med * 1e-6) / 1e9;
  if (am::process_index() != 0)
    return;
  std::printf("%s: median %.1f us (p10 %.1f, p90 %.1f), %.3f GB/s received per process, result %s\n", what, med, p10,
              p90, gbs, right ? "right" : "WRONG");
  std::printf("RESULT %s_us %.2f\nRESULT %s_p10_us %.2f\nRESULT %s_p90_us %.2f\nRESULT %s_gbs %.4f\n", key.c_str(), med,
              key.c_str(), p10, key.c_str(), p90, key.c_str(), gbs);
}

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "process_allgather and broadcast_one_to_all across every process, against a communicator of our own");
  const auto bytes = static_cast<std::size_t>(std::max<long long>(1, flag.integer("--bytes", 1024, "bytes per operation")));
  const bool large = bytes >= (1u << 20);
  const auto warmup = flag.integer("--warmup", large ? 2 : 50, "untimed rounds first");
  const auto rounds = std::max<long long>(1, flag.integer("--rounds", large ? 10 : 500, "timed rounds"));
  flag.finish();
  // The flight recorder keeps every timed call, for the phases below (unless told otherwise).
  ::setenv("AM_FLIGHT_RECORDER_ENTRIES", std::to_string(8 * (warmup + rounds) + 64).c_str(), 0);
  am::runtime rt(argc, argv);
  const int n = am::process_count();
  const int p = am::process_index();
  const auto x = am::host_array::full({static_cast<std::int64_t>(bytes)}, static_cast<std::uint8_t>(p + 1),
                                      am::dtype::uint8);
  const double gathered_bytes = static_cast<double>(bytes) * (n - 1);

  am::host_array gathered;
  auto gather_us = time_calls(warmup, rounds, [&] { gathered = mh::process_allgather(x); });
  bool gather_right = gathered.shape() == std::vector<std::int64_t>{n, static_cast<std::int64_t>(bytes)};
  for (int r = 0; r < n && gather_right; ++r)
    gather_right = all_equal(gathered.bytes().data() + static_cast<std::size_t>(r) * bytes, bytes,
                             static_cast<std::uint8_t>(r + 1));

  am::host_array broadcast;
  auto bcast_us = time_calls(warmup, rounds, [&] { broadcast = mh::broadcast_one_to_all(x); });
  const bool bcast_right = broadcast.nbytes() == bytes && all_equal(broadcast.bytes().data(), bytes, 1);

  // The engine alone: the same bytes through a communicator of our own, into reused buffers.
  auto comm = am::make_communicator("bench multihost utils");
  std::vector<std::uint8_t> out(bytes * static_cast<std::size_t>(n));
  std::vector<std::uint8_t> buffer(bytes, static_cast<std::uint8_t>(p + 1));
  auto raw_gather_us = time_calls(warmup, rounds, [&] { comm->all_gather(x.bytes().data(), out.data(), bytes, am::dtype::uint8); });
  auto raw_bcast_us = time_calls(warmup, rounds, [&] { comm->broadcast(buffer.data(), bytes, am::dtype::uint8, 0); });
  // And a float32 sum of the same bytes (whole floats of them): process p gives p + 1 everywhere.
  const std::size_t floats = std::max<std::size_t>(1, bytes / sizeof(float));
  std::vector<float> addend(floats, static_cast<float>(p + 1)), sum(floats);
  auto raw_sum_us = time_calls(warmup, rounds, [&] {
    comm->all_reduce(addend.data(), sum.data(), floats, am::dtype::float32, am::reduce_op::sum);
  });
  const bool sum_right = std::all_of(sum.begin(), sum.end(), [n](float v) { return v == static_cast<float>(n * (n + 1) / 2); });
  bool raw_right = std::all_of(buffer.begin(), buffer.end(), [](std::uint8_t v) { return v == 1; });
  for (int r = 0; r < n; ++r)
    raw_right = raw_right && std::all_of(out.begin() + static_cast<std::ptrdiff_t>(r * bytes),
                                         out.begin() + static_cast<std::ptrdiff_t>((r + 1) * bytes),
                                         [r](std::uint8_t v) { return v == r + 1; });

  const bool right = gather_right && bcast_right && raw_right && sum_right;
  if (p == 0)
    std::printf("multihost utilities, %d processes, uint8[%zu], %lld rounds after %lld warm-up; each figure the "
                "slowest process's\n", n, bytes, rounds, warmup);
  // Collective (each figure is the slowest process's); rank 0 prints.
  report("  process_allgather", "mh_allgather", gather_us, gathered_bytes, gather_right);
  report("  broadcast_one_to_all", "mh_bcast", bcast_us, static_cast<double>(bytes), bcast_right);
  report("  communicator all_gather (engine alone)", "comm_allgather", raw_gather_us, gathered_bytes, raw_right);
  report("  communicator broadcast (engine alone)", "comm_bcast", raw_bcast_us, static_cast<double>(bytes), raw_right);
  report("  communicator all_reduce, float32 sum (engine alone)", "comm_allreduce", raw_sum_us,
         static_cast<double>(floats * sizeof(float)), sum_right);
  if (p == 0) {
    report_phases("    all_gather phases", "comm_allgather", comm->name(), "all_gather");
    // The utilities' own collectives: a small tree rides in the agreement's all-gather; a large
    // leaf has its own all-gather (or broadcast) of exactly its bytes after the agreement.
    const std::string leaf = "[" + std::to_string(bytes) + "]";
    if (large) {
      report_phases("    process_allgather's all_gather of the leaf", "mh_allgather_leaf", "am.multihost", "all_gather",
                    leaf);
      report_phases("    broadcast_one_to_all's broadcast of the leaf", "mh_bcast_leaf", "am.multihost", "broadcast",
                    leaf);
    }
    report_phases("    broadcast phases", "comm_bcast", comm->name(), "broadcast");
    std::fflush(stdout);
  }
  return right ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_multihost_utils", run, argc, argv); }
