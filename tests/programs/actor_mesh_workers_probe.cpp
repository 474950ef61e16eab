// The program of the actor-meshes-in-workers tests: every process of a single-controller cluster
// runs this binary (AM_ROLE says which part it plays), so the actor classes below are registered
// in all of them. Workers serve; the controller spawns meshes over the workers' devices and prints
// one line per fact.
//
//   actor_mesh_workers_probe calls   a mesh per device over the workers: where each actor runs and
//                                    with which devices, call/call_one/broadcast/choose, a
//                                    coroutine endpoint awaiting another actor, order of 4 threads'
//                                    calls, an endpoint that throws, an array computed on the
//                                    actor's device, a fault restarted by the policy; then stop
//                                    (the workers print their instances' destruction)
//   actor_mesh_workers_probe refused constructor arguments that cannot travel, a constructor that
//                                    throws in a worker
//   actor_mesh_workers_probe kill    a slow call to worker 1's actor, which the test kills meanwhile
#include "actormesh.hpp"
#include "support/probe_output.hpp"
#include "support/single_controller.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using am::testing::say;

struct trainer {
  trainer(const am::actor_point& point, int base, std::string label) : base(base), label(std::move(label)), rank(point.rank) {}
  ~trainer() { say("trainer " + label + " " + std::to_string(rank) + " destroyed in process " + std::to_string(am::process_index())); }
  /// "process P devices [ids]".
  std::string where() const {
    std::string out = "process " + std::to_string(am::process_index()) + " devices";
    for (auto& d : am::this_actor().point.devices)
      out += " " + std::to_string(d.id);
    return out;
  }
  int add(int k) { return count += k; }
  int total() const { return base + count; }
  /// Checks each thread's calls arrive in order: `k` grows per thread.
  bool in_order(int thread, int k) {
    auto& last = last_k[static_cast<std::size_t>(thread)];
    bool ok = k > last;
    last = k;
    return ok;
  }
  int throws(std::string text) { throw am::value_error(text); }
  int faults() { throw am::actor_fault("broken on purpose"); }
  /// Squares `values` on the actor's first device and sums them there.
  double square_sum(std::vector<float> values) {
    auto x = am::device_put(am::host_array::from_vector(values), am::this_actor().point.devices.at(0));
    return am::sum(am::multiply(x, x)).to_host().to_vector<double>()[0];
  }
  /// A coroutine: awaits its array's data without holding the actor's thread.
  am::task<double> square_sum_later(std::vector<float> values) {
    auto x = am::device_put(am::host_array::from_vector(values), am::this_actor().point.devices.at(0));
    auto y = co_await am::ready(am::sum(am::multiply(x, x)));
    co_return y.to_host().to_vector<double>()[0] + base;
  }
  /// Twice `x`, which arrives on the actor's device; the answer travels back as an array.
  am::array twice(am::array x) {
    say("twice got its argument on device " + std::to_string(x.addressable_shards().at(0).device.id) + " of process "
        + std::to_string(am::process_index()));
    return x * 2.0;
  }
  int slow() {
    std::this_thread::sleep_for(30s);
    return 0;
  }
  int base;
  std::string label;
  int rank;
  int count = 0;
  std::vector<int> last_k = std::vector<int>(4, -1);
};

const auto trainer_class = am::actor_class<trainer>("probe.trainer")
                             .endpoint("where", &trainer::where)
                             .endpoint("add", &trainer::add)
                             .endpoint("total", &trainer::total)
                             .endpoint("in_order", &trainer::in_order)
                             .endpoint("throws", &trainer::throws)
                             .endpoint("faults", &trainer::faults)
                             .endpoint("square_sum", &trainer::square_sum)
                             .endpoint("square_sum_later", &trainer::square_sum_later)
                             .endpoint("twice", &trainer::twice)
                             .endpoint("slow", &trainer::slow);

struct opaque {
  int value = 0;
};

struct needs_opaque {
  explicit needs_opaque(opaque o) : value(o.value) {}
  int get() const { return value; }
  int value;
};

const auto needs_opaque_class = am::actor_class<needs_opaque>("probe.needs_opaque").endpoint("get", &needs_opaque::get);

struct broken {
  explicit broken(int code) { throw am::value_error("broken(" + std::to_string(code) + ") refuses to be built"); }
  int get() const { return 0; }
};

const auto broken_class = am::actor_class<broken>("probe.broken").endpoint("get", &broken::get);

/// The points of the workers' devices only.
am::actor_layout workers_devices() {
  std::vector<am::actor_point> points;
  for (auto& d : am::devices())
    if (d.process_index != 0) {
      am::actor_point p;
      p.process = d.process_index;
      p.devices = {d};
      points.push_back(p);
    }
  auto count = static_cast<std::int64_t>(points.size());
  return am::actor_layout({"device"}, {count}, std::move(points));
}

int calls() {
  auto trainers = trainer_class.supervise(am::supervision_policy{2, 60s, false}).spawn(workers_devices(), 100, "t");
  say("spawned " + std::to_string(trainers.size()) + " trainers");
  for (std::int64_t r = 0; r < static_cast<std::int64_t>(trainers.size()); ++r)
    say("trainer " + std::to_string(r) + " runs in " + trainers.slice("device", r).call_one(&trainer::where).get(30s));
  auto added = trainers.call(&trainer::add, 2).get(30s);
  std::string all;
  for (auto v : added)
    all += " " + std::to_string(v);
  say("call add 2:" + all);
  trainers.broadcast(&trainer::add, 3);
  auto totals = trainers.call(&trainer::total).get(30s);
  std::string t;
  for (auto v : totals)
    t += " " + std::to_string(v);
  say("totals after broadcast 3:" + t);
  say("choose total: " + std::to_string(trainers.choose(&trainer::total).get(30s)));
  say("square_sum [1 2 3] on the actors' devices: "
      + std::to_string(static_cast<int>(trainers.slice("device", 0).call_one(&trainer::square_sum, std::vector<float>{1, 2, 3}).get(30s))));
  auto first = trainers.slice("device", 0);
  auto last = trainers.slice("device", static_cast<std::int64_t>(trainers.size()) - 1);
  say("coroutine square_sum_later [1 2]: "
      + std::to_string(static_cast<int>(last.call_one(&trainer::square_sum_later, std::vector<float>{1, 2}).get(30s))));
  auto here = am::device_put(am::host_array::from_vector(std::vector<float>{1, 2, 3}), am::local_devices().at(0));
  auto doubled = last.call_one(&trainer::twice, here).get(30s);
  say("twice [1 2 3]: " + am::to_string(doubled.to_host()) + " on device "
      + std::to_string(doubled.addressable_shards().at(0).device.id));
  std::atomic<int> out_of_order{0};
  std::vector<std::thread> threads;
  for (int thread = 0; thread < 4; ++thread)
    threads.emplace_back([&, thread] {
      std::vector<am::future<bool>> answers;
      for (int k = 0; k < 50; ++k)
        answers.push_back(last.call_one(&trainer::in_order, thread, k));
      for (auto& a : answers)
        out_of_order += a.get(30s) ? 0 : 1;
    });
  for (auto& th : threads)
    th.join();
  say("out of order: " + std::to_string(out_of_order.load()));
  try {
    first.call_one(&trainer::throws, std::string("no such step")).get(30s);
  } catch (const std::exception& e) {
    am::testing::report(e);
  }
  try {
    first.call_one(&trainer::faults).get(30s);
  } catch (const std::exception& e) {
    am::testing::report(e);
  }
  say("after the restart, total: " + std::to_string(first.call_one(&trainer::total).get(30s)));
  // The worker's part forwards its supervision events to the controller's mesh.
  bool seen = false;
  for (int i = 0; i < 500 && !seen; ++i) {
    for (auto& e : trainers.supervision_events())
      if (e.what == am::supervision_event::kind::restarted) {
        say("controller saw " + am::to_string(e.what) + " of rank " + std::to_string(e.rank) + " at " + e.point
            + " (process " + std::to_string(e.process) + "): " + e.cause);
        seen = true;
      }
    if (!seen)
      std::this_thread::sleep_for(10ms);
  }
  if (!seen)
    say("controller saw no restart");
  trainers.stop().get(30s);
  say("stopped");
  try {
    first.call_one(&trainer::total).get(30s);
  } catch (const std::exception& e) {
    am::testing::report(e);
  }
  return 0;
}

int refused() {
  try {
    needs_opaque_class.spawn(workers_devices(), opaque{1});
    say("spawned with opaque arguments");
  } catch (const std::exception& e) {
    am::testing::report(e);
  }
  // Constructed in the spawning process, arguments that cannot travel are fine.
  std::vector<am::actor_point> here(1);
  here[0].process = 0;
  auto local = needs_opaque_class.spawn(am::actor_layout({"one"}, {1}, here), opaque{7});
  say("local opaque: " + std::to_string(local.call_one(&needs_opaque::get).get(30s)));
  auto bad = broken_class.spawn(workers_devices(), 3);
  try {
    bad.slice("device", 0).call_one(&broken::get).get(30s);
  } catch (const std::exception& e) {
    am::testing::report(e);
  }
  // The constructor's failure reaches the controller's mesh as a supervision event too.
  for (int i = 0; i < 500; ++i) {
    for (auto& e : bad.supervision_events())
      if (e.rank == 0) {
        say("controller saw " + am::to_string(e.what) + " of rank 0: " + e.cause);
        return 0;
      }
    std::this_thread::sleep_for(10ms);
  }
  say("controller saw no event");
  return 0;
}

int kill_scenario() {
  auto trainers = trainer_class.spawn(workers_devices(), 0, "k");
  say("calling");
  try {
    trainers.slice("device", 0).call_one(&trainer::slow).get(60s);
    say("no error");
    return 1;
  } catch (const std::exception& e) {
    am::testing::report(e);
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  return am::testing::serve_or_play(argc, argv, {
      {"calls", calls},
      {"refused", refused},
      {"kill", kill_scenario}});
}
