// Single-controller remote call round trip: the controller (process 0) runs a
// one-element program on a device of the worker (process 1) and waits for its output, R times
// after W warm-up calls. One request (controller thread -> the worker's call server over the
// middleman -> the device's lane) and one answer (the device -> the controller's reply sink ->
// the future). The same with to_host of one element (a fetch: the answer carries the bytes).
// Its peer is a raw CAF remote request/receive round trip between two processes configured the
// same way (bench/caf_peer.cpp), run beside it by bench/run_cluster_bench.sh.
//
//   actormesh launch -n 2 --cpu-devices 1 -- ./build/bench/bench_cluster_remote_call [--warmup W] [--rounds R]
#include <actormesh.hpp>

#include "bench_flags.hpp"
#include "bench_cluster_timing.hpp"
#include "bench_report.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using am::bench::percentile;
using am::bench::time_calls;

namespace {


void report(const char* what, const char* key, long long rounds, const std::vector<double>& us) {
  std::printf("%s, %lld rounds: median %.1f us, p10 %.1f, p90 %.1f\n", what, rounds, percentile(us, 0.5),
              percentile(us, 0.1), percentile(us, 0.9));
  std::printf("RESULT %s_us %.2f\nRESULT %s_p10_us %.2f\nRESULT %s_p90_us %.2f\n", key, percentile(us, 0.5), key,
              percentile(us, 0.1), key, percentile(us, 0.9));
}

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "single-controller mode: a one-element program on a worker's device, round trip");
  auto warmup = flag.integer("--warmup", 500, "untimed rounds first");
  auto rounds = std::max<long long>(1, flag.integer("--rounds", 5000, "timed rounds"));
  auto bulk_rounds = std::max<long long>(1, flag.integer("--bulk-rounds", 5, "timed rounds of the bulk transfer"));
  flag.finish();
  // Process 0 controls, the others serve: the launcher's variables say which one this is.
  am::options o;
  o.role = am::resolve_options({}).process_id == 0 ? am::process_role::controller : am::process_role::worker;
  am::runtime rt(argc, argv, o);
  if (am::process_count() < 2)
    throw am::value_error("bench_cluster_remote_call needs at least 2 processes");
  if (am::process_index() != 0) {
    rt.serve();
    return 0;
  }
  am::device worker;
  for (auto& d : am::devices())
    if (d.process_index == 1) {
      worker = d;
      break;
    }
  am::program_builder b("plus one");
  auto x = b.parameter({am::dtype::float32, {1}});
  b.output(b.binary(am::opcode::add, x, b.constant(1.0, {am::dtype::float32, {1}})));
  auto program = b.build();
  auto input = am::upload(worker, std::vector<std::byte>(4), {am::dtype::float32, {1}});
  input.get();
  auto calls = time_calls(warmup, rounds, [&] { am::execute(worker, program, {input})[0].get(); });
  report("actormesh remote device call (controller -> worker device -> answer)", "am_remote_call_rtt", rounds, calls);
  auto one = am::device_put(am::host_array::full<float>({1}, 1.0f, am::dtype::float32), worker);
  auto fetches = time_calls(warmup, rounds, [&] { one.to_host(); });
  report("actormesh remote to_host of one element", "am_remote_fetch_rtt", rounds, fetches);
  // Bulk bytes: a 64 MiB float32 array put on the worker's device and read back (CAF messages).
  auto big = am::host_array::full<float>({16 << 20}, 2.0f, am::dtype::float32);
  am::array on_worker;
  auto puts = time_calls(1, bulk_rounds, [&] {
    on_worker = am::device_put(big, worker);
    on_worker.block_until_ready();
  });
  auto gets = time_calls(1, bulk_rounds, [&] { on_worker.to_host(); });
  double mib = 64.0;
  std::printf("actormesh device_put of 64 MiB to the worker: median %.1f ms (%.2f GB/s)\n", percentile(puts, 0.5) / 1000,
              mib * 1.048576e6 / (percentile(puts, 0.5) * 1e3));
  std::printf("actormesh to_host of 64 MiB from the worker: median %.1f ms (%.2f GB/s)\n", percentile(gets, 0.5) / 1000,
              mib * 1.048576e6 / (percentile(gets, 0.5) * 1e3));
  std::printf("RESULT am_remote_put_gbs %.3f\nRESULT am_remote_get_gbs %.3f\n",
              mib * 1.048576e6 / (percentile(puts, 0.5) * 1e3), mib * 1.048576e6 / (percentile(gets, 0.5) * 1e3));
  std::fflush(stdout);
  return 0;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_cluster_remote_call", run, argc, argv); }
