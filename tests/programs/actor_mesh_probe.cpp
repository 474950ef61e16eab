// A program the actor mesh integration tests start as every process of a cluster (`actormesh
// launch -n 4 --cpu-devices 2`): a mesh of one actor per device over every process, called from
// every process. Each check prints one line, "ok <what>" or "FAIL <what>: ...".
//
//   actor_mesh_probe calls     every call form against a local computation, across processes:
//                              call (gathered), call_one on another process's actor, broadcast,
//                              choose, values that travel (strings, vectors, maps, a struct with an
//                              inspect overload, host arrays), exceptions with their type and text,
//                              am::actor_fault, an endpoint whose types cannot travel, order from
//                              4 threads to another process's actor
//   actor_mesh_probe kill P    process P kills itself (SIGKILL) once the mesh is spawned; the others
//                              call its actors and print the error and the supervision events
//   actor_mesh_probe hostile   process 1 sends process 0's gateway a malformed call and calls that
//                              name no mesh, no endpoint, a rank out of range and undecodable
//                              arguments; each is refused and process 0 keeps serving
//   actor_mesh_probe under-attack FLAG
//                              every process prints "gateway port: N" (its gateway's port, for a
//                              hostile peer to attack), waits until the file FLAG exists, then
//                              calls an actor of every process and prints "still serving"
#include "actormesh.hpp"
#include "actor_mesh/detail/gateway.hpp"
#include "actors/cluster_services.hpp"
#include "devices/detail/actor_links.hpp"
#include "devices/detail/actor_system_of.hpp"
#include "devices/runtime_context.hpp"
#include "support/probe_output.hpp"

#include <caf/all.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <thread>

using am::testing::say;
using namespace std::chrono_literals;

namespace {

struct reading {
  std::string sensor;
  std::vector<double> values;
  std::map<std::string, int> tags;
};

template <class Inspector>
bool inspect(Inspector& f, reading& r) {
  return f(r.sensor, r.values, r.tags);
}

/// A custom exception type the caller's process cannot rebuild.
struct probe_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct worker {
  explicit worker(const am::actor_point& point) : rank(point.rank), process(point.process) {}
  int rank_of() const { return rank; }
  int process_of() const { return process; }
  std::string where() const { return am::point_string(am::this_actor().axis_names, am::this_actor().point.coords); }
  int add(int a, int b) { return total += a + b; }
  int total_of() const { return total; }
  reading summarize(const reading& in) {
    reading out = in;
    double sum = 0;
    for (double v : in.values)
      sum += v;
    out.values = {sum};
    out.tags["rank"] = rank;
    return out;
  }
  am::host_array doubled(const am::host_array& a) {
    auto v = a.to_vector<float>();
    for (auto& x : v)
      x *= 2;
    return am::host_array::from_vector(v, a.shape());
  }
  int fails(const std::string& text) { throw am::value_error(text); }
  int fails_custom(const std::string& text) { throw probe_error(text); }
  int faults(const std::string& text) { throw am::actor_fault(text); }
  bool record(int thread, int k) {
    auto& last = seen[thread];
    bool ok = k == last + 1;
    last = k;
    in_order = in_order && ok;
    return ok;
  }
  bool ordered() const { return in_order; }
  std::unique_ptr<int> cannot_travel() { return std::make_unique<int>(1); }
  int rank, process, total = 0;
  std::map<int, int> seen{{0, -1}, {1, -1}, {2, -1}, {3, -1}};
  bool in_order = true;
};

const auto worker_class = am::actor_class<worker>("probe.worker")
                            .endpoint("rank_of", &worker::rank_of)
                            .endpoint("process_of", &worker::process_of)
                            .endpoint("where", &worker::where)
                            .endpoint("add", &worker::add)
                            .endpoint("total_of", &worker::total_of)
                            .endpoint("summarize", &worker::summarize)
                            .endpoint("doubled", &worker::doubled)
                            .endpoint("fails", &worker::fails)
                            .endpoint("fails_custom", &worker::fails_custom)
                            .endpoint("faults", &worker::faults)
                            .endpoint("record", &worker::record)
                            .endpoint("ordered", &worker::ordered)
                            .endpoint("cannot_travel", &worker::cannot_travel);

void check(bool ok, const std::string& what, const std::string& detail = "") {
  say((ok ? "ok " : "FAIL ") + what + (ok || detail.empty() ? "" : ": " + detail));
}

template <class F>
void expect_error(const std::string& what, F&& f, const std::string& kind, const std::string& text) {
  try {
    f();
    check(false, what, "no error");
  } catch (const std::exception& e) {
    std::string got = am::detail::describe_exception(std::current_exception());
    bool ok = got.find(kind) != std::string::npos && got.find(text) != std::string::npos;
    check(ok, what, got);
  }
}

void calls() {
  int me = am::process_index();
  int n = am::process_count();
  auto mesh = worker_class.spawn(am::actor_layout::per_device());
  check(mesh.size() == static_cast<std::size_t>(2 * n), "spawned " + mesh.layout().shape_string());
  auto ranks = mesh.call(&worker::rank_of).get(30s);
  bool ranks_ok = true;
  for (std::size_t r = 0; r < ranks.size(); ++r)
    ranks_ok = ranks_ok && ranks[r] == static_cast<int>(r);
  check(ranks_ok, "call gathers every rank");
  auto processes = mesh.call(&worker::process_of).get(30s);
  check(processes.at({n - 1, 1}) == n - 1, "the actor at {host: n-1, device: 1} runs in process n-1");
  int other = (me + 1) % n;
  auto there = mesh.slice("host", other).slice("device", 1);
  check(there.call_one(&worker::where).get(30s) == "{host: " + std::to_string(other) + ", device: 1}",
        "call_one on process " + std::to_string(other));
  // Each process adds its own amount to every actor; the totals agree once everyone has.
  mesh.broadcast(&worker::add, me, 1);
  am::multihost::sync_global_devices("probe.after_broadcast");
  auto totals = mesh.call(&worker::total_of).get(30s);
  int expected = 0;
  for (int p = 0; p < n; ++p)
    expected += p + 1;
  bool totals_ok = true;
  for (auto t : totals)
    totals_ok = totals_ok && t == expected;
  check(totals_ok, "broadcast from every process reached every actor");
  int chosen = mesh.choose(&worker::rank_of).get(30s);
  check(chosen >= 0 && chosen < 2 * n, "choose answers from one actor");
  reading in{"thermo", {1.5, 2.5, 3}, {{"site", 7}}};
  auto out = there.call_one(&worker::summarize, in).get(30s);
  check(out.sensor == "thermo" && out.values == std::vector<double>{7} && out.tags.at("site") == 7
          && out.tags.at("rank") == 2 * other + 1,
        "a struct with an inspect overload travels both ways");
  auto a = am::host_array::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  auto twice = there.call_one(&worker::doubled, a).get(30s);
  check(twice.shape() == std::vector<std::int64_t>{2, 2} && twice.to_vector<float>() == std::vector<float>{2, 4, 6, 8},
        "a host array travels both ways");
  expect_error("a remote value_error keeps its type and text",
               [&] { there.call_one(&worker::fails, std::string("bad input")).get(30s); }, "am::value_error", "bad input");
  expect_error("a remote exception of the program's own type arrives as am::remote_error naming it",
               [&] { there.call_one(&worker::fails_custom, std::string("custom")).get(30s); }, "am::remote_error",
               "custom");
  try {
    there.call_one(&worker::fails_custom, std::string("custom")).get(30s);
  } catch (const am::remote_error& e) {
    check(e.type_name().find("probe_error") != std::string::npos, "am::remote_error::type_name names the type", e.type_name());
  }
  expect_error("an endpoint whose types cannot travel is refused for another process's actor",
               [&] { there.call_one(&worker::cannot_travel).get(30s); }, "am::type_error", "cannot travel");
  // Order: 4 threads, 300 calls each to one actor of another process, alternating one-way and answered.
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 300; ++k) {
        if (k % 2 == 0)
          there.broadcast(&worker::record, t, k);
        else if (!there.call_one(&worker::record, t, k).get(30s))
          ++bad;
      }
    });
  for (auto& th : threads)
    th.join();
  check(bad == 0 && there.call_one(&worker::ordered).get(30s), "each thread's calls arrive in order across processes");
  am::multihost::sync_global_devices("probe.before_fault");
  if (me == 0) {
    auto victim = mesh.slice("host", n - 1).slice("device", 0);
    expect_error("am::actor_fault across processes fails the call", [&] {
      victim.call_one(&worker::faults, std::string("broken")).get(30s);
    }, "am::actor_fault", "broken");
    expect_error("the faulted actor's later calls fail, naming it", [&] { victim.call_one(&worker::rank_of).get(30s); },
                 "am::actor_failure_error", "actor 'probe.worker' at {host: " + std::to_string(n - 1) + ", device: 0}");
  }
  am::multihost::sync_global_devices("probe.done");
  say("all checks done");
}

void kill(int victim) {
  int me = am::process_index();
  auto mesh = worker_class.spawn(am::actor_layout::per_device());
  mesh.call(&worker::rank_of).get(30s);
  am::multihost::sync_global_devices("probe.spawned");
  if (me == victim) {
    say("killing myself");
    std::raise(SIGKILL);
  }
  auto dead = mesh.slice("host", victim).slice("device", 0);
  auto start = std::chrono::steady_clock::now();
  expect_error("a call to an actor of the killed process fails, naming it and the process",
               [&] {
                 for (int i = 0; i < 200; ++i) {
                   dead.call_one(&worker::rank_of).get(30s);
                   std::this_thread::sleep_for(50ms);
                 }
               },
               "am::actor_failure_error",
               "actor 'probe.worker' at {host: " + std::to_string(victim) + ", device: 0} (process "
                 + std::to_string(victim) + ") failed: process " + std::to_string(victim));
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  check(took < 5s, "the failure came within 5 s", std::to_string(took.count()) + " ms");
  for (int i = 0; i < 100 && mesh.supervision_events().size() < 2; ++i)
    std::this_thread::sleep_for(20ms);
  auto events = mesh.supervision_events();
  int failed = 0;
  for (auto& e : events)
    failed += e.what == am::supervision_event::kind::failed && e.process == victim;
  check(failed == 2, "the owner got one supervision event per actor of the killed process",
        std::to_string(failed) + " of " + std::to_string(events.size()));
  auto alive = mesh.slice("host", (victim + 1) % am::process_count()).slice("device", 1);
  check(alive.call_one(&worker::rank_of).get(30s) >= 0, "the other actors go on");
  // The survivors keep their actors until every survivor is done (a barrier would wait for the
  // dead one too).
  auto context = am::detail::current_context();
  context->cluster().kv_set("probe.done." + std::to_string(me), "1");
  for (int p = 0; p < am::process_count(); ++p)
    if (p != victim)
      context->cluster().kv_get("probe.done." + std::to_string(p), 30s);
  say("all checks done");
}

void hostile() {
  using acall_atom = caf::atom_constant<caf::atom("am_acall")>;
  int me = am::process_index();
  auto mesh = worker_class.spawn(am::actor_layout::per_device());
  auto zero = mesh.slice("host", 0).slice("device", 0);
  if (me == 1) {
    auto context = am::detail::current_context();
    auto gateway = am::detail::gateway_of(*context);
    // Garbage bytes where a call belongs, from a raw CAF actor of this process.
    auto address = context->cluster().kv_get("am/actors/gateway/0", 30s);
    auto peer = am::detail::connect_published(*context, address, std::chrono::steady_clock::now() + 30s);
    {
      caf::scoped_actor raw{am::detail::actor_system_of(*context)};
      for (std::string junk : {std::string("garbage"), std::string(), std::string(64, '\xff')})
        raw->send(peer, acall_atom::value, junk);
      raw->send(peer, acall_atom::value, 42); // a call of the wrong type
    }
    auto forged = [&](am::detail::actor_call call, const std::string& what, const std::string& text) {
      am::promise<std::string> answer;
      auto got = answer.get_future();
      am::detail::send_call(*gateway, 0, std::move(call), "forged", 0,
                            [answer](const std::exception_ptr& e, const std::string& v) mutable {
                              if (e)
                                answer.set_error(e);
                              else
                                answer.set_value(v);
                            });
      expect_error(what, [&] { got.get(30s); }, "", text);
    };
    forged({"no.such#1", 0, "rank_of", 0, ""}, "a call naming no mesh is refused", "has no actor mesh 'no.such#1'");
    forged({"probe.worker#1", 0, "no_endpoint", 0, ""}, "a call naming no endpoint is refused", "has no endpoint 'no_endpoint'");
    forged({"probe.worker#1", 5, "rank_of", 0, ""}, "a call naming a rank that is not there is refused", "has no actor of rank 5");
    forged({"probe.worker#1", 0, "add", 0, "\x01\x02"}, "undecodable arguments are refused", "malformed cluster message");
  }
  am::multihost::sync_global_devices("probe.hostile_done");
  check(zero.call_one(&worker::rank_of).get(30s) == 0, "process 0 keeps serving");
  am::multihost::sync_global_devices("probe.end"); // process 0 keeps its actors until everyone is done
  say("all checks done");
}

void under_attack(const std::string& flag) {
  auto mesh = worker_class.spawn(am::actor_layout::per_process());
  auto context = am::detail::current_context();
  auto address = context->cluster().kv_get("am/actors/gateway/" + std::to_string(am::process_index()), 30s);
  say("gateway port: " + address.substr(address.rfind(':') + 1));
  for (int i = 0; i < 1200 && !std::ifstream(flag).good(); ++i)
    std::this_thread::sleep_for(50ms);
  auto ranks = mesh.call(&worker::rank_of).get(30s);
  check(ranks.size() == static_cast<std::size_t>(am::process_count()), "every process's actor answers after the attack");
  am::multihost::sync_global_devices("probe.attack_done");
  say("still serving");
}

} // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  try {
    am::runtime rt(argc, argv);
    if (mode == "calls")
      calls();
    else if (mode == "kill" && argc > 2)
      kill(std::atoi(argv[2]));
    else if (mode == "hostile")
      hostile();
    else if (mode == "under-attack" && argc > 2)
      under_attack(argv[2]);
    else {
      std::fprintf(stderr, "usage: actor_mesh_probe calls | kill P | hostile | under-attack FLAG\n");
      return 2;
    }
    rt.stop();
  } catch (const std::exception& e) {
    am::testing::report(e);
    return 1;
  }
  return 0;
}
