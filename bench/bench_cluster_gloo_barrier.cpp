// Gloo barrier benchmark: not a target's figure but the measure of one way to
// close the barrier gap. bench_cluster_barrier goes through the mesh supervisor (one central CAF
// actor: a request and an answer through each process's middleman and scheduler); this program
// times gloo::barrier over a Gloo TCP full mesh among the same processes, rendezvoused through
// the cluster store exactly as am::communicator's engine is (devices/collectives/gloo_store.hpp),
// i.e. what a barrier routed through the collectives engine, peer to peer, would cost. Process 0
// prints the median and 10th/90th percentiles of R barriers after W warm-up ones.
//
// With --idle-ms M every process first sleeps M ms with its Gloo mesh connected and prints the CPU
// time the process used meanwhile: whether Gloo's device loop thread sleeps while nothing moves.
//
//   actormesh launch -n 4 --cpu-devices 1 -- ./build/bench/bench_cluster_gloo_barrier [--warmup W] [--rounds R] [--idle-ms M]
#include <actormesh.hpp>

#include "bench_flags.hpp"
#include "bench_report.hpp"
#include "devices/collectives/gloo_store.hpp"
#include "devices/detail/runtime_impl.hpp"

#include <gloo/barrier.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <ctime>
#include <memory>
#include <thread>
#include <vector>

namespace {

using am::bench::percentile;

using clock_type = std::chrono::steady_clock;

double process_cpu_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "Gloo's own barrier across every process (a peer of bench_cluster_barrier)");
  auto warmup = flag.integer("--warmup", 200, "untimed rounds first");
  auto rounds = std::max<long long>(1, flag.integer("--rounds", 2000, "timed rounds"));
  auto idle = flag.integer("--idle-ms", 0, "milliseconds to stay idle with the mesh connected, measuring the CPU time it costs");
  flag.finish();
  am::runtime rt(argc, argv);
  int me = am::process_index();
  int n = am::process_count();
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  auto context = std::make_shared<gloo::rendezvous::Context>(me, n);
  context->setTimeout(std::chrono::seconds(30));
  am::detail::gloo_store store(am::detail::current_runtime()->cluster(), "bench gloo barrier",
                               clock_type::now() + std::chrono::seconds(30));
  context->connectFullMesh(store, device);
  if (idle > 0) {
    double before = process_cpu_ms();
    std::this_thread::sleep_for(std::chrono::milliseconds(idle));
    std::printf("process %d: %.1f ms of CPU time while idle for %lld ms with a Gloo mesh connected\n", me,
                process_cpu_ms() - before, idle);
    std::fflush(stdout);
    am::distributed::wait_at_barrier("bench gloo idle", std::chrono::seconds(60));
  }
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(rounds));
  for (long long k = 0; k < warmup + rounds; ++k) {
    gloo::BarrierOptions opts(context);
    opts.setTimeout(std::chrono::seconds(10));
    auto start = clock_type::now();
    gloo::barrier(opts);
    if (k >= warmup)
      us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
  }
  if (me == 0) {
    std::printf("Gloo barrier (TCP full mesh), %d processes, %lld rounds: median %.1f us, p10 %.1f, p90 %.1f\n", n,
                rounds, percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9));
    std::printf("RESULT gloo_barrier_us %.2f\nRESULT gloo_barrier_p10_us %.2f\nRESULT gloo_barrier_p90_us %.2f\n",
                percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9));
    std::fflush(stdout);
  }
  // Leave together: a process that closes its pairs while another still waits would fail it.
  am::distributed::wait_at_barrier("bench gloo barrier done", std::chrono::seconds(60));
  return 0;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_cluster_gloo_barrier", run, argc, argv); }
