// The program of the colocated-in-workers tests: every process of a single-controller cluster runs
// this binary (AM_ROLE says which part it plays), so the colocated functions and classes below are
// registered by name in all of them. Workers serve; the controller plays one scenario on the
// workers' CPU devices and prints one line per fact.
//
//   colocated_workers_probe functions   a function learns its specs in worker 1 and runs there (its
//                                       body adds the index of the process it runs in), then runs
//                                       asynchronously; outputs stay in the worker
//   colocated_workers_probe concurrency two 1-second calls from two controller threads, and each
//                                       thread's calls to one object in order
//   colocated_workers_probe objects     an object built in worker 1 (the worker prints its creation
//                                       and destruction), a constructor that throws, arguments that
//                                       cannot travel, an unknown function
//   colocated_workers_probe spanning    one call on the devices of workers 1 and 2: each runs it on its
//                                       own part
//   colocated_workers_probe kill        a slow call in worker 1, which the test kills meanwhile
//   colocated_workers_probe threads     60 controller threads one after another, each calling worker
//                                       1's code and ending: the worker's thread count before and after
#include "actormesh.hpp"
#include "support/probe_output.hpp"
#include "support/single_controller.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using am::testing::say;

/// The body adds the index of the process it runs in, so the result shows where it ran.
const auto add_process_index = am::colocated_python("probe.add_process_index", [](const am::array& x) {
  return x + am::process_index();
});

const auto sleep_then_copy = am::colocated_python("probe.sleep_then_copy", [](const am::array& x) {
  std::this_thread::sleep_for(1s);
  return x + 0;
});

/// Fails in process 2 only: a call spanning workers 1 and 2 fails as a whole.
const auto fail_in_process_2 = am::colocated_python("probe.fail_in_process_2", [](const am::array& x) {
  if (am::process_index() == 2)
    throw am::value_error("process 2 refuses");
  return x + 0;
});

const auto log_value = am::colocated_python("probe.log_value", [](const am::array& x) {
  say("worker " + std::to_string(am::process_index()) + " logs " + am::to_string(x.to_host()));
});

/// The number of threads of the process it runs in (/proc/self/status), as x * 0 + count.
const auto thread_count = am::colocated_python("probe.thread_count", [](const am::array& x) {
  std::ifstream status("/proc/self/status");
  std::string line;
  int threads = -1;
  while (std::getline(status, line))
    if (line.rfind("Threads:", 0) == 0)
      threads = std::stoi(line.substr(8));
  return x * 0 + threads;
});

/// Counts its calls: add(x) returns x * 0 + the number of calls before this one.
struct counter {
  explicit counter(std::string label) : label(std::move(label)) {
    say("counter " + this->label + " created in process " + std::to_string(am::process_index()));
  }
  ~counter() { say("counter " + label + " destroyed"); }
  am::array next(const am::array& x) { return x * 0 + calls++; }
  std::string label;
  int calls = 0;
};

const auto counter_class = am::colocated_python_class<counter>("probe.counter").def("next", &counter::next);

struct broken {
  explicit broken(int code) { throw am::value_error("broken(" + std::to_string(code) + ") refuses to be built"); }
  am::array id(const am::array& x) { return x; }
};

const auto broken_class = am::colocated_python_class<broken>("probe.broken").def("id", &broken::id);

struct opaque_argument {
  int value = 0;
};

struct needs_opaque {
  explicit needs_opaque(opaque_argument a) : value(a.value) {}
  am::array id(const am::array& x) { return x + value; }
  int value;
};

const auto needs_opaque_class = am::colocated_python_class<needs_opaque>("probe.needs_opaque").def("id", &needs_opaque::id);

/// Built from an am::array (JAX's `Value(jnp.array(...))`): in a worker, the array arrives as its
/// data, put on the first device of the call that builds the object.
struct offset_by {
  explicit offset_by(am::array offset) : offset(std::move(offset)) {
    say("offset_by built on " + am::to_string(this->offset.addressable_shards().at(0).device) + " in process "
        + std::to_string(am::process_index()));
  }
  am::array add(const am::array& x) { return x + offset; }
  am::array offset;
};

const auto offset_class = am::colocated_python_class<offset_by>("probe.offset_by").def("add", &offset_by::add);

/// The CPU devices of process p.
std::vector<am::device> devices_of(int p) {
  std::vector<am::device> out;
  for (auto& d : am::devices())
    if (d.process_index == p)
      out.push_back(d);
  return out;
}

/// (n,) float32 0, 1, 2, ... sharded over `devices`.
am::array ramp_on(const std::vector<am::device>& devices, std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < v.size(); ++k)
    v[k] = static_cast<float>(k);
  am::mesh m({static_cast<std::int64_t>(devices.size())}, devices, {"x"});
  return am::device_put(am::host_array::from_vector(v, {n}), am::make_named_sharding(m, am::P("x")));
}

std::string values(const am::array& a) { return am::to_string(a.to_host()); }

std::string processes_of(const am::array& a) {
  std::string out;
  for (auto& s : a.addressable_shards())
    out += (out.empty() ? "" : " ") + std::to_string(s.device.process_index);
  return out;
}

auto same_as_first = [](const am::spec_tree& in) { return in[0]; };

int functions() {
  auto x = ramp_on(devices_of(1), 4);
  auto y = add_process_index(x); // first call: runs in worker 1 now, learns the output specs
  say("first call: " + values(y) + " on processes " + processes_of(y));
  say("known signatures: " + std::to_string(add_process_index.known_signatures()));
  auto z = add_process_index(y); // asynchronous now
  auto w = add_process_index(z);
  say("chained calls: " + values(w));
  auto f = add_process_index.specialize({.out_specs_fn = same_as_first});
  say("specialized: " + values(f(x)));
  auto sum = am::sum(w); // an array operation on a colocated output, in the worker
  say("sum of chained: " + values(sum));
  log_value(x).get();
  say("void call done");
  return 0;
}

int concurrency() {
  auto x = ramp_on(devices_of(1), 2);
  auto slow = sleep_then_copy.specialize({.out_specs_fn = same_as_first});
  slow(x).block_until_ready(); // warm
  auto start = std::chrono::steady_clock::now();
  auto a = std::async(std::launch::async, [&] { return slow(x); });
  auto b = std::async(std::launch::async, [&] { return slow(x); });
  auto ra = a.get(), rb = b.get();
  ra.block_until_ready();
  rb.block_until_ready();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  say("two 1-second calls from two threads took " + std::to_string(seconds) + " s");

  constexpr int threads = 4, calls = 40;
  std::atomic<int> violations{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      auto obj = counter_class("t" + std::to_string(t));
      auto next = obj.method<am::array(am::array)>("next").specialize({.out_specs_fn = same_as_first});
      std::vector<am::array> got;
      for (int k = 0; k < calls; ++k)
        got.push_back(next(x));
      for (int k = 0; k < calls; ++k)
        if (got[static_cast<std::size_t>(k)].to_host().to_vector<float>()[0] != static_cast<float>(k))
          ++violations;
    });
  for (auto& t : pool)
    t.join();
  say("order violations: " + std::to_string(violations.load()));
  return 0;
}

int objects() {
  auto x = ramp_on(devices_of(1), 2);
  {
    auto obj = counter_class("solo");
    say("wrapper made");
    auto next = obj.method<am::array(am::array)>("next");
    std::string calls = "calls:";
    for (int k = 0; k < 3; ++k)
      calls += " " + values(next(x));
    say(calls);
  }
  say("wrapper dropped");
  auto bad = broken_class(7);
  auto id = bad.method<am::array(am::array)>("id");
  for (int k = 0; k < 2; ++k) {
    try {
      id(x);
      say("broken built?");
    } catch (const std::exception& e) {
      am::testing::report(e);
    }
  }
  try {
    needs_opaque_class(opaque_argument{3}).method<am::array(am::array)>("id")(x);
    say("opaque travelled?");
  } catch (const std::exception& e) {
    am::testing::report(e);
  }
  {
    // An array made on the controller's device travels to the worker as a constructor argument.
    auto offset = am::device_put(am::host_array::from_vector(std::vector<float>{10, 20}), devices_of(0).front());
    auto shifted = offset_class(offset);
    say("array argument in the worker: " + values(shifted.call(&offset_by::add, x)));
  }
  auto local = needs_opaque_class(opaque_argument{3}).method<am::array(am::array)>("id");
  say("opaque on the controller's devices: " + values(local(ramp_on(devices_of(0), 2))));
  std::this_thread::sleep_for(300ms); // let the worker print the destruction before we stop
  return 0;
}

int spanning() {
  std::vector<am::device> both = devices_of(1);
  for (auto& d : devices_of(2))
    both.push_back(d);
  auto x = ramp_on(both, 8);
  say("spanning input: " + values(x));
  auto y = add_process_index(x);
  say("spanning first call: " + values(y) + " on processes " + processes_of(y));
  auto z = add_process_index(y);
  say("spanning second call: " + values(z));
  try {
    fail_in_process_2(x);
    say("failing call returned?");
  } catch (const std::exception& e) {
    am::testing::report(e);
  }
  say("after the failed call: " + values(add_process_index(x)));
  std::vector<am::device> mixed = devices_of(0);
  mixed.push_back(devices_of(1)[0]);
  try {
    add_process_index(ramp_on(mixed, 3));
    say("mixed ran?");
  } catch (const std::exception& e) {
    am::testing::report(e);
  }
  return 0;
}

int kill_scenario() {
  auto x = ramp_on(devices_of(1), 2);
  auto slow = sleep_then_copy.specialize({.out_specs_fn = same_as_first});
  say("calling");
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      slow(x).block_until_ready();
    } catch (const std::exception& e) {
      am::testing::report(e);
      return 0;
    }
  }
  say("no error within 60 s");
  return 1;
}

int threads_scenario() {
  auto x = ramp_on(devices_of(1), 2);
  auto count = [&] { return static_cast<int>(thread_count(x).to_host().to_vector<float>()[0]); };
  auto slow = sleep_then_copy.specialize({.out_specs_fn = same_as_first});
  int before = count();
  for (int t = 0; t < 60; ++t)
    std::thread([&] {
      add_process_index(x).block_until_ready();
      auto obj = counter_class("thread");
      obj.method<am::array(am::array)>("next")(x).block_until_ready();
    }).join();
  std::this_thread::sleep_for(500ms); // the retirements reach the worker
  int after = count();
  say("worker threads before " + std::to_string(before) + ", after 60 controller threads " + std::to_string(after));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  return am::testing::serve_or_play(argc, argv, {
      {"functions", functions},
      {"concurrency", concurrency},
      {"objects", objects},
      {"spanning", spanning},
      {"kill", kill_scenario},
      {"threads", threads_scenario}});
}
