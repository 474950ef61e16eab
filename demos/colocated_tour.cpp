// The colocated tour: every example of seeds/000 (jax.experimental.colocated_python) in
// C++, with the seed's printed lines. The code runs on the host of the CPU devices its arrays live
// on. Run locally, that host is this process:
//
//   ./build/demos/colocated_tour
//
// Run under the launcher, process 0 becomes the controller of a single-controller cluster and the
// others its workers; the tour then runs on the CPU devices of worker 1, so every colocated body
// and every Adder runs in that worker's process (its lines carry its prefix), while the controller
// prints the results:
//
//   ./build/tools/actormesh launch -n 2 --cpu-devices 1 -- ./build/demos/colocated_tour
#include "demos/support/demo_command_line.hpp"
#include <actormesh.hpp>

#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <string>
#include <thread>

using namespace std::chrono_literals;

namespace {

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void section(const std::string& title) { say("\n== " + title); }

std::string device_list(const std::vector<am::device>& devices) {
  std::string out = "[";
  for (std::size_t k = 0; k < devices.size(); ++k)
    out += (k ? ", " : "") + am::to_string(devices[k]);
  return out + "]";
}

/// `Array(2, dtype=int32)`: what Python's REPL shows for a small array (JAX adds weak_type).
std::string repr(const am::array& a) {
  return "Array(" + am::to_string(a.to_host()) + ", dtype=" + std::string(am::name(a.dtype())) + ")";
}

// Colocated functions and classes are registered by name at namespace scope, so that every process
// of this binary knows them (code never travels, only names and arguments).

// def f(x): return x + 1
const auto add_one = am::colocated_python("tour.add_one", [](const am::array& x) { return x + 1; });

// def f(x): with open('/tmp/foo', 'w') as f: f.write(str(x)); return x
const auto write_x = am::colocated_python("tour.write_x", [](const am::array& x) {
  std::ofstream("/tmp/foo") << am::to_string(x.to_host());
  return x;
});

// def f(): with open('/tmp/foo', 'w') as f: f.write('foo')
const auto write_foo = am::colocated_python("tour.write_foo", [] { std::ofstream("/tmp/foo") << "foo"; });

// def f(x): time.sleep(1); return x + 1
const auto sleepy_add_one = am::colocated_python("tour.sleepy_add_one", [](const am::array& x) {
  std::this_thread::sleep_for(1s);
  return x + 1;
});

std::promise<void> adder_gone;

// class Adder: __init__ prints 'Adder created', __del__ 'Adder destroyed', add(x) = x + increment
struct Adder {
  explicit Adder(int increment) : increment(increment) { say("Adder created"); }
  ~Adder() {
    say("Adder destroyed");
    adder_gone.set_value();
  }
  am::array add(const am::array& x) { return x + increment; }
  int increment;
};

const auto adder_class = am::colocated_python_class<Adder>("tour.Adder").def("add", &Adder::add);

} // namespace

namespace {

/// The devices the tour runs on: this process's, or worker 1's when this is the controller.
std::vector<am::device> tour_devices() {
  if (am::process_count() == 1)
    return am::devices();
  std::vector<am::device> worker;
  for (auto& d : am::devices())
    if (d.process_index == 1)
      worker.push_back(d);
  return worker;
}

/// Under the launcher (AM_NUM_PROCESSES > 1): process 0 controls, the others are its workers.
bool launched() {
  const char* n = std::getenv("AM_NUM_PROCESSES");
  return n && std::atoi(n) > 1;
}

int tour(); // the seed's examples, on tour_devices()

} // namespace

int main(int argc, char** argv) {
  am::demo::command_line cli("colocated_tour", "Every example of colocated Python (seed 000) in C++ "
                                               "(run alone, or under `actormesh launch -n 2 --cpu-devices 1`)");
  if (auto status = cli.parse(argc, argv))
    return *status;
  am::options opts;
  opts.cpu_devices = 1; // the seed's machine: one CPU device
  if (launched()) {
    const char* id = std::getenv("AM_PROCESS_ID");
    opts.role = id && std::atoi(id) == 0 ? am::process_role::controller : am::process_role::worker;
  }
  am::runtime rt(argc, argv, opts);
  if (launched() && am::process_index() != 0) {
    say("worker " + std::to_string(am::process_index()) + " serves the controller");
    rt.serve();
    return 0;
  }
  if (launched())
    say("controller: the tour runs on worker 1's CPU devices");
  return tour();
}

namespace {

int tour() {
  section("Colocated CPU devices");
  auto devices = tour_devices();
  auto cpu_devices = am::colocated_cpu_devices(devices);
  say(device_list(cpu_devices)); // [CpuDevice(id=0)]

  am::mesh cpu_mesh({static_cast<std::int64_t>(cpu_devices.size())}, cpu_devices, {"x"});
  auto cpu_sharding = am::make_named_sharding(cpu_mesh, am::P());
  auto x = am::device_put(am::host_array::scalar(1), cpu_sharding);
  auto y = am::jit([](const am::array& v) { return v + 1; })(x);
  say(am::to_string(y.to_host())); // 2

  section("Colocated functions");
  y = add_one(x);
  if (!y.sharding()->is_equivalent_to(*x.sharding(), 0))
    throw std::logic_error("y.sharding != x.sharding");
  say(am::to_string(y.to_host())); // 2

  // The body may do I/O; block on the output to know it has run.
  auto written = write_x(x);
  written.block_until_ready();
  say(repr(written)); // Array(1, dtype=int32)

  section("Specialization");
  // out_specs_fn=lambda x: x: computed on the caller's side, so every call is asynchronous.
  auto f = add_one.specialize({.out_specs_fn = [](const am::spec_tree& in) { return in[0]; }});
  y = f(x);
  if (!y.sharding()->is_equivalent_to(*x.sharding(), 0))
    throw std::logic_error("y.sharding != x.sharding");

  // in_specs: the call's input must match (a tuple of the arguments' specs).
  am::shape_dtype_struct int_scalar{{}, am::dtype::int32, cpu_sharding};
  auto g = add_one.specialize({.in_specs = am::spec_tree::tuple({int_scalar}),
                               .out_specs_fn = [int_scalar](const am::spec_tree&) { return am::spec_tree(int_scalar); }});
  say(repr(g(x))); // Array(2, dtype=int32)

  // devices: lets a function without inputs run (an error otherwise).
  auto h = write_foo.specialize({.devices = cpu_devices});
  h().get();
  try {
    write_foo();
  } catch (const am::value_error& e) {
    say(std::string("without devices: ") + e.what());
  }

  section("Colocated classes");
  {
    auto adder = adder_class(1); // records 1; nothing is constructed yet
    auto x1 = am::device_put(am::host_array::scalar(1), cpu_sharding);
    auto sum = adder.call(&Adder::add, x1); // constructs Adder(1) on the host; checked at compile time
    say(am::to_string(sum.to_host()));                        // 2
  } // del adder: the instance is destroyed asynchronously
  if (am::process_count() == 1)
    adder_gone.get_future().wait_for(30s);
  else
    std::this_thread::sleep_for(200ms); // the worker prints "Adder destroyed"

  section("Execution order and concurrency");
  auto slow = sleepy_add_one.specialize({.out_specs_fn = [](const am::spec_tree& in) { return in[0]; }});
  auto start = std::chrono::steady_clock::now();
  auto fut1 = std::async(std::launch::async, [&] { return slow(x); });
  auto fut2 = std::async(std::launch::async, [&] { return slow(x); });
  auto r1 = fut1.get();
  auto r2 = fut2.get();
  r1.block_until_ready();
  r2.block_until_ready();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  say(fmt::format("two 1-second calls from two threads: {:.2f} s (one after the other: 2 s)", seconds));
  return 0;
}

} // namespace
