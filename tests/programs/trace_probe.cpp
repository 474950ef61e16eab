// A program the trace tests run (alone, or as every process of `actormesh launch`) with AM_TRACE:
// N jitted calls over an array sharded on this process's devices, then, in a cluster, one barrier
// and one all-gather on a communicator; prints what it did so the test can match the trace to it.
//
//   trace_probe CALLS [twice]   prints "devices D", "calls N", then "barrier", "all_gather B" and
//                               "global sum" (a sum whose partial sums cross processes) in a
//                               cluster; with `twice` (one process), a second runtime after the
//                               first stopped makes CALLS more calls of "second_f"; with `killed`
//                               (one process), after its calls it waits 2.5 s and kills itself
//                               with SIGKILL, its runtime still running
#include "actormesh.hpp"
#include "support/probe_output.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>
#include <unistd.h>
#include <string>
#include <vector>

namespace {

using am::testing::say;

/// The second runtime of `trace_probe CALLS twice`: `calls` jitted calls named "second_f".
void second_runtime(int argc, char** argv, int calls) {
  am::runtime rt(argc, argv);
  auto x = am::device_put(am::host_array::zeros({4}, am::dtype::float32), am::local_devices()[0]);
  auto f = am::jit([](const am::array& a) { return a + 1.0f; }, "second_f");
  for (int i = 0; i < calls; ++i)
    x = f(x);
  x.block_until_ready();
  say("second runtime calls " + std::to_string(calls));
}

/// The first runtime: `calls` jitted calls named "traced_f", then the cluster's steps.
void first_runtime(int argc, char** argv, int calls, bool killed) {
  am::runtime rt(argc, argv);
  auto local = am::local_devices();
  const auto d = static_cast<std::int64_t>(local.size());
  am::mesh m({d}, local, {"x"});
  auto x = am::device_put(am::host_array::zeros({d * 4, 4}, am::dtype::float32), am::make_named_sharding(m, am::P("x")));
  x.block_until_ready();
  auto f = am::jit([](const am::array& a) { return am::sin(a) * 2.0f + a; }, "traced_f");
  {
    am::trace_scope scope("jitted calls");
    for (int i = 0; i < calls; ++i)
      x = f(x);
    x.block_until_ready();
  }
  say("devices " + std::to_string(d));
  say("calls " + std::to_string(calls));
  if (killed) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500)); // past a flush (AM_TRACE_FLUSH_SECONDS=1)
    say("killing myself");
    ::kill(::getpid(), SIGKILL);
  }
  if (am::process_count() > 1) {
    am::distributed::wait_at_barrier("traced barrier");
    say("barrier");
    auto comm = am::make_communicator("trace probe");
    std::vector<float> in(16, 1.0f), out(16 * static_cast<std::size_t>(comm->size()));
    comm->all_gather(in.data(), out.data(), in.size(), am::dtype::float32);
    say("all_gather " + std::to_string(in.size() * sizeof(float)));
    // A sum over an array sharded across every process's devices: its partial sums cross processes
    // (shard transfers).
    const auto all = static_cast<std::int64_t>(am::device_count());
    am::mesh global({all}, am::devices(), {"x"});
    auto g = am::device_put(am::host_array::zeros({2 * all}, am::dtype::float32), am::make_named_sharding(global, am::P("x")));
    am::sum(g).block_until_ready();
    say("global sum");
  }
}

int run(int argc, char** argv) {
  if (argc < 2)
    throw am::value_error("usage: trace_probe CALLS [twice|killed]");
  const int calls = std::atoi(argv[1]);
  first_runtime(argc, argv, calls, argc > 2 && std::string(argv[2]) == "killed");
  if (argc > 2 && std::string(argv[2]) == "twice")
    second_runtime(argc, argv, calls);
  say("done");
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    am::testing::report(e);
    return 1;
  }
}
