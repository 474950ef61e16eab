// Store round trip benchmark (beside bench_cluster_remote_call, the single-controller device call
// whose figure has a target): the cluster store's am::distributed::blocking_key_value_get of a key
// that is already set, from process 1 to the mesh supervisor on process 0. That is one CAF request
// and one answer through the cluster client (user thread -> send_as through the middleman ->
// supervisor actor -> answer to the client actor -> promise -> the waiting thread). Its peer is a
// raw CAF remote request/receive round trip between two processes configured the same way
// (bench/caf_peer.cpp).
//
// Process 1 times R reads after W warm-up reads and prints the median and 10th/90th percentiles.
//
//   actormesh launch -n 2 --cpu-devices 1 -- ./build/bench/bench_cluster_store [--warmup W] [--rounds R]
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
  am::bench::flags flag(argc, argv, "a round trip of the cluster's key-value store (process 1 to the supervisor)");
  auto warmup = flag.integer("--warmup", 500, "untimed rounds first");
  auto rounds = std::max<long long>(1, flag.integer("--rounds", 5000, "timed rounds"));
  flag.finish();
  am::runtime rt(argc, argv);
  if (am::process_count() < 2)
    throw am::value_error("bench_cluster_store needs at least 2 processes");
  int me = am::process_index();
  if (me == 0)
    am::distributed::key_value_set("bench key", "a value of some bytes");
  am::distributed::wait_at_barrier("bench store set", std::chrono::seconds(30));
  if (me == 1) {
    std::vector<double> us;
    us.reserve(static_cast<std::size_t>(rounds));
    for (long long k = 0; k < warmup + rounds; ++k) {
      auto start = clock_type::now();
      am::distributed::blocking_key_value_get("bench key", std::chrono::seconds(10));
      if (k >= warmup)
        us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
    }
    std::printf("actormesh store round trip (blocking_key_value_get from process 1), %lld rounds: median %.1f us, "
                "p10 %.1f, p90 %.1f\n",
                rounds, percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9));
    std::printf("RESULT am_store_rtt_us %.2f\nRESULT am_store_rtt_p10_us %.2f\nRESULT am_store_rtt_p90_us %.2f\n",
                percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9));
    std::fflush(stdout);
  }
  am::distributed::wait_at_barrier("bench store done", std::chrono::seconds(120));
  return 0;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_cluster_store", run, argc, argv); }
