// psum inside pmap across processes: a pmap over the first device of every process whose body is
// one am::psum of a --bytes float32 block per device, called back to back, each call waited for
// (block_until_ready). Its peer is MPI_Allreduce of the same bytes (bench/mpi_peers sum), run beside
// it by bench/run_collectives_matrix.sh --psum. Prints the slowest process's median and 10th/90th
// percentiles in microseconds; the result is checked (every element n(n + 1) / 2). Run alone (one
// process, --am-cpu-devices=2 or more) it maps the first 2 devices of that process instead.
//
//   actormesh launch -n 2 --cpu-devices 1 -- ./build/bench/bench_cluster_psum [--bytes B] [--warmup W] [--rounds R]
#include <actormesh.hpp>

#include "bench_cluster_timing.hpp"
#include "bench_flags.hpp"
#include "bench_report.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

using am::bench::percentile;

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "psum inside pmap over the first device of every process");
  const auto bytes = std::max(4LL, flag.integer("--bytes", 1024, "bytes per device (float32)"));
  const auto warmup = flag.integer("--warmup", 50, "untimed calls first");
  const auto rounds = std::max(1LL, flag.integer("--rounds", 500, "timed calls"));
  flag.finish();
  am::runtime rt(argc, argv);
  std::vector<am::device> devices;
  for (auto& d : am::devices()) // alone: the first 2 local devices, to compare
    if (am::process_count() == 1 ? devices.size() < 2 : d.local_ordinal == 0)
      devices.push_back(d);
  const auto n = static_cast<std::int64_t>(devices.size());
  const std::int64_t floats = bytes / 4;
  // Row r (on process r's device) holds r + 1 everywhere.
  std::vector<float> rows;
  for (std::int64_t r = 0; r < n; ++r)
    rows.insert(rows.end(), static_cast<std::size_t>(floats), static_cast<float>(r + 1));
  auto x = am::device_put(am::host_array::from_vector(rows, {n, floats}), devices);
  auto summed = am::pmap([](const am::array& a) { return am::psum(a, "i"); }, "i", {0}, {0}, devices);
  am::array out;
  auto us = am::bench::time_calls(warmup, rounds, [&] {
    out = summed(x);
    out.block_until_ready();
  });
  bool right = true;
  for (auto& shard : out.addressable_shards()) {
    auto h = am::shard_data(out, shard).to_host().to_vector<float>();
    right = right && std::all_of(h.begin(), h.end(), [n](float v) { return v == static_cast<float>(n * (n + 1) / 2); });
  }
  using am::bench::slowest_of_processes;
  const double med = slowest_of_processes(percentile(us, 0.5)), p10 = slowest_of_processes(percentile(us, 0.1)),
               p90 = slowest_of_processes(percentile(us, 0.9));
  const bool all_right = slowest_of_processes(right ? 0.0 : 1.0) == 0.0;
  if (am::process_index() == 0) {
    std::printf("psum in pmap, %lld processes, %lld bytes per device, %lld rounds: median %.1f us (p10 %.1f, p90 %.1f), "
                "slowest process's, result %s\n",
                static_cast<long long>(n), bytes, rounds, med, p10, p90, all_right ? "right" : "WRONG");
    std::printf("RESULT pmap_psum_us %.2f\nRESULT pmap_psum_p10_us %.2f\nRESULT pmap_psum_p90_us %.2f\n", med, p10, p90);
    std::fflush(stdout);
  }
  return all_right ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_cluster_psum", run, argc, argv); }
