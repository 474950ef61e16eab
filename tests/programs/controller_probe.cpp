// The controller of the single-controller tests: process 0 of a cluster whose other processes are
// `actormesh worker`s. Its AM_* variables describe the cluster (AM_ROLE=controller). It plays one
// scenario and prints one line per fact, so the tests can check it.
//
//   controller_probe ops        device_put, eager operations, jit, resharding across processes, a
//                               global sum and to_host on arrays whose shards live in workers
//   controller_probe order T N  T threads each add 1 to their own shard on a worker device N times
//                               (and to a shared one): every thread's order holds across the network
//   controller_probe garbage    malformed and hostile requests to a worker, then normal work
//   controller_probe misuse     a worker's device given an input from another process directly
//   controller_probe kill       work on worker 1 in a loop; the test kills worker 1 meanwhile
//   controller_probe stop-in-flight  threads keep calling workers while the runtime stops
//   controller_probe hold       the runtime up, working, until the test kills the controller
//   controller_probe churn N    N arrays of 1 MiB on a worker device, one after another
//   controller_probe bulk       shards past the data-plane threshold put, computed, read back; and
//                               one that the worker has no memory for
#include "actormesh.hpp"
#include "support/probe_output.hpp"
#include "support/reach_line.hpp"
#include "devices/detail/runtime_impl.hpp"
#include "devices/remote/remote_messages.hpp"
#include "devices/remote/remote_wire.hpp"

#include <caf/send.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

using am::testing::say;

/// The largest difference between two float32 host arrays of one shape.
double max_difference(const am::host_array& a, const am::host_array& b) {
  auto x = a.to_vector<float>(), y = b.to_vector<float>();
  if (x.size() != y.size())
    return INFINITY;
  double worst = 0;
  for (std::size_t k = 0; k < x.size(); ++k)
    worst = std::max(worst, std::abs(static_cast<double>(x[k]) - y[k]));
  return worst;
}

/// A (rows, cols) float32 host array with value (i*cols+j) % 97 / 10.
am::host_array ramp(std::int64_t rows, std::int64_t cols) {
  std::vector<float> v(static_cast<std::size_t>(rows * cols));
  for (std::size_t k = 0; k < v.size(); ++k)
    v[k] = static_cast<float>(k % 97) / 10.0f;
  return am::host_array::from_vector(v, {rows, cols});
}

am::sharding_ptr grid_sharding(const am::partition_spec& spec) {
  int n = am::device_count();
  am::mesh m(am::create_device_mesh({n / 2, 2}, am::devices()), {"x", "y"});
  return am::make_named_sharding(m, spec);
}

/// The devices of process p.
std::vector<am::device> devices_of(int p) {
  std::vector<am::device> out;
  for (auto& d : am::devices())
    if (d.process_index == p)
      out.push_back(d);
  return out;
}

int ops() {
  say(am::testing::reach_line());
  auto host = ramp(16, 8);
  auto x = am::device_put(host, grid_sharding(am::P("x", "y")));
  say("fully addressable: " + std::string(x.is_fully_addressable() ? "yes" : "no") + ", shards here: "
      + std::to_string(x.addressable_shards().size()));
  std::string where = "shards on processes:";
  for (auto& s : x.addressable_shards())
    where += " " + std::to_string(s.device.process_index);
  say(where);
  say("round trip max difference: " + std::to_string(max_difference(x.to_host(), host)));
  // Eager and jitted operations run on every shard's own device.
  auto doubled = (x + x).to_host();
  auto expected_doubled = host;
  {
    auto v = host.to_vector<float>();
    for (auto& e : v)
      e *= 2;
    expected_doubled = am::host_array::from_vector(v, {16, 8});
  }
  say("eager x + x max difference: " + std::to_string(max_difference(doubled, expected_doubled)));
  auto f = am::jit([](const am::array& a) { return am::sin(a) * 2.0 + 1.0; });
  auto y = f(x);
  auto v = host.to_vector<float>();
  for (auto& e : v)
    e = std::sin(e) * 2.0f + 1.0f;
  auto expected_y = am::host_array::from_vector(v, {16, 8});
  say("jit max difference: " + std::to_string(max_difference(y.to_host(), expected_y)));
  // Resharding moves blocks between the controller and the workers and between workers.
  auto moved = am::device_put(y, grid_sharding(am::P("y", "x")));
  say("reshard max difference: " + std::to_string(max_difference(moved.to_host(), expected_y)));
  auto transposed = am::transpose(y, {1, 0});
  double worst = 0;
  auto t = transposed.to_host().to_vector<float>();
  for (std::int64_t i = 0; i < 16; ++i)
    for (std::int64_t j = 0; j < 8; ++j)
      worst = std::max(worst, std::abs(static_cast<double>(t[static_cast<std::size_t>(j * 16 + i)]) - v[static_cast<std::size_t>(i * 8 + j)]));
  say("transpose max difference: " + std::to_string(worst));
  double total = 0;
  for (auto e : v)
    total += e;
  auto s = am::sum(y).to_host().item<float>();
  say("sum relative difference: " + std::to_string(std::abs(s - total) / std::abs(total)));
  say("ops done");
  return 0;
}

int order(int threads, int count) {
  auto worker_devices = devices_of(1);
  auto target = worker_devices.front();
  std::atomic<int> wrong{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      auto d = worker_devices[static_cast<std::size_t>(t) % worker_devices.size()];
      auto a = am::device_put(am::host_array::full<float>({4}, static_cast<float>(t), am::dtype::float32), d);
      for (int k = 0; k < count; ++k)
        a = a + 1.0;
      auto got = a.to_host().to_vector<float>();
      for (auto g : got)
        if (g != static_cast<float>(t + count))
          ++wrong;
    });
  for (auto& th : pool)
    th.join();
  // One thread's chain through two processes: worker 1 -> worker 2 -> the controller and back.
  auto a = am::device_put(am::host_array::full<float>({8}, 0.0f, am::dtype::float32), target);
  for (int k = 0; k < 20; ++k) {
    auto next = am::devices()[static_cast<std::size_t>(k) % am::devices().size()];
    a = am::device_put(a, next) + 1.0;
  }
  auto chained = a.to_host().to_vector<float>();
  say("chain value: " + std::to_string(chained.front()));
  say("order wrong values: " + std::to_string(wrong.load()));
  return 0;
}

int garbage() {
  auto rt = am::detail::current_runtime();
  auto server = rt->cluster().call_server_of(1);
  // Bytes that are no request, a request naming a device the worker lacks, one naming a handle it
  // lacks, and an oversized count: each refused, the worker keeps serving.
  caf::anon_send(server, am::detail::remote::call_atom::value, std::string("\x07garbage\xff\xff", 10));
  caf::anon_send(server, am::detail::remote::call_atom::value, std::string(3, '\0'));
  am::detail::remote::request q;
  q.kind = am::detail::remote::request_kind::fetch;
  q.device = 0; // the controller's device, not the worker's
  q.inputs = {12345};
  q.outputs = {999999};
  caf::anon_send(server, am::detail::remote::call_atom::value, encode(q));
  q.device = devices_of(1).front().id;
  caf::anon_send(server, am::detail::remote::call_atom::value, encode(q));
  auto big = encode(q);
  big[1 + 8 + 4 + 1 + 7] = '\x7f'; // the input count's top byte: a count far past the limit
  caf::anon_send(server, am::detail::remote::call_atom::value, big);
  auto x = am::device_put(ramp(4, 4), devices_of(1).front());
  auto back = (x * 3.0).to_host().to_vector<float>();
  auto host = ramp(4, 4).to_vector<float>();
  bool same = true;
  for (std::size_t k = 0; k < host.size(); ++k)
    same = same && std::abs(back[k] - host[k] * 3) < 1e-6f;
  say(std::string("worker still serves: ") + (same ? "yes" : "no"));
  return 0;
}

int misuse() {
  auto here = am::device_put(ramp(2, 2), am::local_devices().front());
  auto there = devices_of(1).front();
  auto code = am::program_builder("negate");
  auto p = code.parameter({am::dtype::float32, {2, 2}});
  code.output(code.unary(am::opcode::neg, p));
  auto program = code.build();
  try {
    am::execute(there, program, {here.addressable_shards().front().data});
    say("no error");
  } catch (const std::exception& e) {
    say(std::string("error ") + am::testing::error_kind(e) + ": " + e.what());
  }
  try {
    am::distributed::wait_at_barrier("controller alone", std::chrono::seconds(30));
    say("no barrier error");
  } catch (const std::exception& e) {
    say(std::string("barrier error ") + am::testing::error_kind(e) + ": " + e.what());
  }
  return 0;
}

int kill_loop() {
  auto d = devices_of(1).front();
  auto a = am::device_put(ramp(64, 64), d);
  say("issuing");
  auto start = clock_type::now();
  try {
    for (int k = 0; k < 100000 && clock_type::now() - start < 60s; ++k) {
      a = a + 1.0;
      if (k % 50 == 0)
        a.to_host();
    }
    say("no failure");
  } catch (const std::exception& e) {
    say(std::string("error ") + am::testing::error_kind(e) + ": " + e.what());
  }
  // Work on the controller's own devices and on the other worker goes on.
  auto b = am::device_put(ramp(4, 4), devices_of(2).front());
  say("other worker after the failure: " + std::to_string((b + 1.0).to_host().to_vector<float>().front()));
  return 0;
}

/// Threads keep issuing calls to workers' devices while the main thread stops the runtime: every
/// call either completes or fails with am::runtime_error; none hangs. Deterministic by design: the
/// runtime is stopped only once every thread has completed a round trip, and a thread leaves its
/// loop only through an error (a flag set after stop() let a thread whose last call completed just
/// before the stop see the flag and leave without being refused: "refused threads 2"), or after a
/// bound, when it reports itself as never refused.
int stop_in_flight(am::runtime& rt) {
  constexpr int threads = 4;
  std::atomic<int> done{0}, refused{0}, other{0}, unrefused{0}, started{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      auto until = clock_type::now() + 60s; // far past the stop: reaching it means a call kept working
      bool counted = false;
      try {
        auto d = am::devices()[static_cast<std::size_t>(2 + t % (am::device_count() - 2))];
        auto a = am::device_put(ramp(32, 32), d);
        while (clock_type::now() < until) {
          a = a * 1.0 + 1.0;
          a.to_host();
          ++done;
          if (!counted) {
            counted = true;
            ++started;
          }
        }
        ++unrefused;
      } catch (const am::runtime_error&) {
        ++refused;
      } catch (...) {
        ++other;
      }
      if (!counted)
        ++started; // failed before its first round trip: the main thread need not wait for it
    });
  // Stop only while every thread is inside its loop (not after a fixed sleep, which a loaded
  // machine may not fill with a round trip per thread).
  auto deadline = clock_type::now() + 30s;
  while (started.load() < threads && clock_type::now() < deadline)
    std::this_thread::sleep_for(5ms);
  rt.stop();
  for (auto& th : pool)
    th.join();
  say("completed " + std::string(done > 0 ? "some" : "none") + ", refused threads " + std::to_string(refused.load())
      + ", other errors " + std::to_string(other.load()) + ", never refused " + std::to_string(unrefused.load()));
  return 0;
}

int churn(int count) {
  auto d = devices_of(1).front();
  for (int k = 0; k < count; ++k) {
    auto a = am::device_put(am::host_array::full<float>({256, 1024}, static_cast<float>(k), am::dtype::float32), d);
    auto b = a + 1.0; // a second buffer, dropped with `a` at the end of the iteration
    if (b.to_host().to_vector<float>().front() != static_cast<float>(k + 1)) {
      say("wrong value at " + std::to_string(k));
      return 1;
    }
  }
  say("churned " + std::to_string(count) + " arrays");
  return 0;
}

int bulk() {
  auto host = ramp(1024, 1024); // 4 MiB: 512 KiB per shard over 8 devices
  auto x = am::device_put(host, grid_sharding(am::P("x", "y")));
  say("bulk round trip max difference: " + std::to_string(max_difference(x.to_host(), host)));
  auto y = am::jit([](const am::array& a) { return a * 2.0; })(x);
  auto v = host.to_vector<float>();
  for (auto& e : v)
    e *= 2;
  say("bulk jit max difference: " + std::to_string(max_difference(y.to_host(), am::host_array::from_vector(v, {1024, 1024}))));
  // 8 MiB on one worker device limited to 4 MiB (AM_CPU_MEMORY_LIMIT on the worker): the upload
  // fails there, and reading the array back reports it instead of waiting.
  auto too_big = am::device_put(ramp(2048, 1024), devices_of(1).front());
  try {
    too_big.to_host();
    say("no error");
  } catch (const std::exception& e) {
    say(std::string("error ") + am::testing::error_kind(e) + ": " + e.what());
  }
  // The failed value moved on to another worker: the transfer carries the error, the receiving
  // side fails with it at once (not after the collective timeout).
  auto start = clock_type::now();
  try {
    am::device_put(too_big, devices_of(2).front()).to_host();
    say("no error after the move");
  } catch (const std::exception& e) {
    say(std::string("moved error ") + am::testing::error_kind(e) + ": " + e.what());
  }
  say("moved error after " + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count())
      + " ms");
  return 0;
}

int hold() {
  auto a = am::device_put(ramp(8, 8), devices_of(1).front());
  say("holding");
  for (int k = 0; k < 6000; ++k) { // the test kills this process meanwhile
    a = a + 1.0;
    a.block_until_ready();
    std::this_thread::sleep_for(10ms);
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) {
    std::fprintf(stderr, "usage: controller_probe ops|order T N|garbage|misuse|kill|stop-in-flight|hold|churn N|bulk\n");
    return 2;
  }
  std::string scenario = argv[1];
  try {
    am::runtime rt;
    say("controller of " + std::to_string(am::process_count()) + " processes, " + std::to_string(am::device_count())
        + " devices");
    if (scenario == "ops")
      return ops();
    if (scenario == "order")
      return order(argc > 2 ? std::atoi(argv[2]) : 4, argc > 3 ? std::atoi(argv[3]) : 100);
    if (scenario == "garbage")
      return garbage();
    if (scenario == "misuse")
      return misuse();
    if (scenario == "kill")
      return kill_loop();
    if (scenario == "stop-in-flight")
      return stop_in_flight(rt);
    if (scenario == "hold")
      return hold();
    if (scenario == "bulk")
      return bulk();
    if (scenario == "churn")
      return churn(argc > 2 ? std::atoi(argv[2]) : 100);
    std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
    return 2;
  } catch (const std::exception& e) {
    say(std::string("error ") + am::testing::error_kind(e) + ": " + e.what());
    return 1;
  }
}
