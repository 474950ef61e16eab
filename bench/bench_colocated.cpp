// Colocated call benchmark: the round trip of a colocated call (call, then wait
// for its output) against raw CAF request/response round trips and Ray's synchronous actor call,
// and asynchronous colocated call throughput from several threads against Ray's asynchronous
// actor calls, all measured in the same run.
//
//   ./build/bench/bench_colocated [--rounds N] [--threads T] [--calls C] [--processes P]
//                                 [--ray-python PATH | --no-ray] [--ray-script PATH] [--worker-program PATH]
//
// Ray runs in a child process (bench/ray_peer.py, with --ray-python, else $AM_RAY_PYTHON, else
// /work/venv-ray/bin/python, else python3); without Ray installed it is skipped with a message.
// With --processes P (P >= 2) the benchmark starts P-1 copies of itself as workers on loopback
// (`bench_colocated worker ...`: the same binary, so the same functions are registered there), runs
// as their controller and measures the colocated round trip to a worker's CPU device too.
#include <actormesh.hpp>

#include <caf/all.hpp>

#include "bench_flags.hpp"
#include "bench_paths.hpp"
#include "bench_report.hpp"
#include "call_peers.hpp"
#include "tools/worker_processes.hpp"

#include <fmt/core.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using am::bench::caf_round_trips;
using am::bench::default_ray_python;
using am::bench::percentile;
using am::bench::ray_figures;
using am::bench::round_trips;
using am::bench::run_ray;

namespace {

using clock_type = am::bench::call_clock;

/// The function every call runs: returns its input (the round trip is the call path alone).
const auto identity = am::colocated_python("bench.identity", [](const am::array& x) { return x; });

/// An object whose method returns its input.
struct echo_object {
  am::array echo(const am::array& x) { return x; }
};
const auto echo_class = am::colocated_python_class<echo_object>("bench.echo").def("echo", &echo_object::echo);

am::spec_tree same_as_first(const am::spec_tree& in) { return in[0]; }

/// A scalar on `d`.
am::array scalar_on(const am::device& d) {
  am::mesh m({1}, {d}, {"x"});
  return am::device_put(am::host_array::scalar(1), am::make_named_sharding(m, am::P()));
}

/// Asynchronous calls from `threads` threads, `calls` each, every thread waiting for its outputs
/// at the end; calls per second over all threads.
double async_throughput(const am::colocated_function<am::array(am::array)>& f, const am::device& d, int threads,
                        int calls) {
  std::vector<std::thread> workers;
  auto start = clock_type::now();
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&] {
      auto x = scalar_on(d);
      std::vector<am::array> outs;
      outs.reserve(static_cast<std::size_t>(calls));
      for (int i = 0; i < calls; ++i)
        outs.push_back(f(x));
      for (auto& y : outs)
        y.block_until_ready();
    });
  for (auto& w : workers)
    w.join();
  return threads * calls / std::chrono::duration<double>(clock_type::now() - start).count();
}

void print_line(const char* what, const std::vector<double>& s, double reference_median) {
  double med = percentile(s, 0.5);
  fmt::print("  {:<52} {:9.2f} us (p99 {:9.2f})", what, med, percentile(s, 0.99));
  if (reference_median > 0)
    fmt::print("   peer/colocated time {:.2f}", med / reference_median);
  fmt::print("\n");
  if (reference_median > 0)
    am::bench::ratio_line(med / reference_median, std::string(what) + ": this time / the colocated call's");
}

/// `bench_colocated worker --coordinator HOST:PORT --process-id K --num-processes P --cpu-devices D`:
/// a worker of the --processes mode. It is this binary, so that the functions and classes the
/// benchmark registers are registered there too (code never travels, only names).
int serve_as_worker(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "bench_colocated's worker process (started by the benchmark itself)");
  am::options opts;
  opts.role = am::process_role::worker;
  opts.use_gpus = false;
  opts.coordinator_address = flag.text("--coordinator", "", "the controller's host:port");
  opts.process_id = static_cast<int>(flag.integer("--process-id", 1, "this worker's process id"));
  opts.num_processes = static_cast<int>(flag.integer("--num-processes", 2, "processes of the cluster"));
  opts.cpu_devices = static_cast<int>(flag.integer("--cpu-devices", 1, "CPU devices of this worker"));
  flag.finish();
  am::runtime rt(opts);
  rt.serve();
  rt.stop();
  return 0;
}

int run(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "worker") == 0)
    return serve_as_worker(argc, argv);
  am::bench::flags flag(argc, argv, "a colocated call's round trip and asynchronous throughput, against raw CAF and Ray's actor calls");
  const int rounds = static_cast<int>(flag.integer("--rounds", 5000, "timed rounds"));
  const int threads = static_cast<int>(flag.integer("--threads", 4, "caller threads"));
  const int calls = static_cast<int>(flag.integer("--calls", 20000, "asynchronous calls per thread"));
  const int processes = static_cast<int>(flag.integer("--processes", 1, "processes in the cluster"));
  const auto worker_program = flag.text("--worker-program", am::tools::running_executable(), "the workers' program (this one, with `worker` first)");
  const bool no_ray = flag.present("--no-ray", "skip the Ray peer");
  const auto ray_python = flag.text("--ray-python", default_ray_python(), "the Python that runs the Ray peer");
  const auto ray_script = flag.text("--ray-script", am::bench::source_dir() + "/ray_peer.py", "the Ray peer's script");
  flag.finish();
  if (rounds < 1 || threads < 1 || calls < 1 || processes < 1)
    throw am::value_error("--rounds, --threads, --calls and --processes must be at least 1");

  std::optional<am::tools::worker_processes> workers;
  am::options opts;
  opts.use_gpus = false;
  opts.cpu_devices = 1;
  if (processes > 1) {
    const auto& program = worker_program;
    int port = am::tools::free_loopback_port();
    workers.emplace(program, processes, port, 1);
    opts.role = am::process_role::controller;
    opts.coordinator_address = "127.0.0.1:" + std::to_string(port);
    opts.process_id = 0;
    opts.num_processes = processes;
  }
  am::runtime rt(argc, argv, opts);
  auto here = am::local_devices()[0];
  auto f = identity.specialize({.out_specs_fn = same_as_first});
  auto x = scalar_on(here);

  fmt::print("actormesh colocated call benchmark ({} rounds; {} threads x {} asynchronous calls; {} cores; "
             "{} process(es))\n",
             rounds, threads, calls, std::thread::hardware_concurrency(), processes);
  auto colocated = round_trips(rounds, [&] { f(x).block_until_ready(); });
  auto obj = echo_class();
  auto echo = obj.method<am::array(am::array)>("echo").specialize({.out_specs_fn = same_as_first});
  auto method = round_trips(rounds, [&] { echo(x).block_until_ready(); });
  auto bare = round_trips(rounds, [] { am::host_call([] {}).get(); });

  caf::actor_system_config cfg;
  caf::actor_system peer_system{cfg};
  auto caf_detached = caf_round_trips(peer_system, rounds, true);
  auto caf_scheduled = caf_round_trips(peer_system, rounds, false);

  double med = percentile(colocated, 0.5);
  fmt::print("round trip in one process (call, then wait for the output), median:\n");
  print_line("colocated function call", colocated, 0);
  print_line("colocated method call", method, med);
  print_line("bare host lane call (host_call of an empty task)", bare, med);
  print_line("raw CAF scoped_actor request to a detached actor", caf_detached, med);
  print_line("raw CAF scoped_actor request to a scheduled actor", caf_scheduled, med);

  std::optional<std::vector<double>> remote;
  if (processes > 1) {
    auto there = am::devices().back();
    try {
      auto xr = scalar_on(there);
      remote = round_trips(rounds, [&] { f(xr).block_until_ready(); });
      fmt::print("round trip across processes (controller -> worker {} on loopback), median:\n",
                 there.process_index);
      print_line("colocated function call", *remote, 0);
    } catch (const am::error& e) {
      fmt::print("round trip across processes: not measured: {}\n", e.what());
    }
  }

  double rate = async_throughput(f, here, threads, calls);
  fmt::print("asynchronous colocated calls from {} threads: {:.0f} calls/s\n", threads, rate);

  std::optional<ray_figures> ray;
  if (no_ray)
    fmt::print("  Ray: skipped (--no-ray)\n");
  else
    ray = run_ray(ray_python, ray_script, std::min(rounds, 2000),
                  std::min(calls * threads, 20000));
  if (ray) {
    fmt::print("Ray actor calls (bench/ray_peer.py, same run):\n");
    fmt::print("  {:<52} {:9.2f} us (p99 {:9.2f})   peer/colocated time {:.1f}\n", "synchronous call",
               ray->median_us, ray->p99_us, ray->median_us / med);
    fmt::print("  {:<52} {:9.0f} calls/s   colocated/Ray rate {:.1f}\n", "asynchronous calls", ray->async_per_s,
               rate / ray->async_per_s);
  }
  fmt::print("targets: median round trip <= 10 us in one process ({:.2f} us: {})", med, med <= 10 ? "met" : "missed");
  if (remote)
    fmt::print(", <= 150 us across processes ({:.2f} us: {})", percentile(*remote, 0.5),
               percentile(*remote, 0.5) <= 150 ? "met" : "missed");
  if (ray)
    fmt::print(", throughput >= 100x Ray's ({:.0f}x: {})", rate / ray->async_per_s,
               rate >= 100 * ray->async_per_s ? "met" : "missed");
  fmt::print("\n");
  rt.stop();
  if (workers && !workers->wait(std::chrono::seconds(30)))
    fmt::print("workers did not end cleanly:\n{}", workers->output());
  return 0;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_colocated", run, argc, argv); }
