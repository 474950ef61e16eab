// Actor meshes in one process: spawning over every kind of layout, slicing, every call form against
// a local computation, endpoint and constructor exceptions, the restart and stop policies, stopping
// with calls in flight, and the runtime stopping under a mesh.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>
#include "support/eventually.hpp"
#include "support/cpu_options.hpp"

using namespace std::chrono_literals;

namespace {

std::atomic<int> constructed{0};
std::atomic<int> destroyed{0};

struct counter {
  counter(const am::actor_point& point, int start) : n(start + 100 * point.rank), rank(point.rank) { ++constructed; }
  ~counter() { ++destroyed; }
  int add(int k) { return n += k; }
  int value() const { return n; }
  std::string where() const { return am::point_string(am::this_actor().axis_names, am::this_actor().point.coords); }
  std::vector<int> devices() const {
    std::vector<int> ids;
    for (auto& d : am::this_actor().point.devices)
      ids.push_back(d.id);
    return ids;
  }
  void reset() { n = 0; }
  int slow(int ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return rank;
  }
  int throws(const std::string& text) { throw am::value_error(text); }
  int faults(const std::string& text) { throw am::actor_fault(text); }
  int not_an_endpoint() { return -1; }
  int n;
  int rank;
};

const auto counter_class = am::actor_class<counter>("test.counter")
                             .endpoint("add", &counter::add)
                             .endpoint("value", &counter::value)
                             .endpoint("where", &counter::where)
                             .endpoint("devices", &counter::devices)
                             .endpoint("reset", &counter::reset)
                             .endpoint("slow", &counter::slow)
                             .endpoint("throws", &counter::throws)
                             .endpoint("faults", &counter::faults);

struct fragile {
  explicit fragile(bool fail) {
    if (fail)
      throw std::invalid_argument("no data for this trainer");
  }
  int ok() { return 1; }
};

const auto fragile_class = am::actor_class<fragile>("test.fragile").endpoint("ok", &fragile::ok);

using am::testing::eventually;

} // namespace

TEST_CASE("actor meshes spawn one actor per point of each kind of layout", "[actor_mesh]") {
  am::runtime rt(am::test::cpu_options(4));
  SECTION("per device: host and device axes, one device each") {
    auto mesh = counter_class.spawn(am::actor_layout::per_device(), 10);
    REQUIRE(mesh.size() == 4);
    CHECK(mesh.layout().shape_string() == "{host: 1, device: 4}");
    auto where = mesh.call(&counter::where).get();
    CHECK(where.at({0, 2}) == "{host: 0, device: 2}");
    auto devices = mesh.call(&counter::devices).get();
    for (int d = 0; d < 4; ++d)
      CHECK(devices[static_cast<std::size_t>(d)] == std::vector<int>{d});
  }
  SECTION("per device of a mesh: its axes") {
    am::mesh m({2, 2}, am::devices(), {"x", "y"});
    auto mesh = counter_class.spawn(am::actor_layout::per_device(m), 0);
    CHECK(mesh.layout().shape_string() == "{x: 2, y: 2}");
    CHECK(mesh.call(&counter::where).get().at({1, 0}) == "{x: 1, y: 0}");
  }
  SECTION("per process: one actor with every device") {
    auto mesh = counter_class.spawn(am::actor_layout::per_process(), 0);
    CHECK(mesh.layout().shape_string() == "{process: 1}");
    CHECK(mesh.call_one(&counter::devices).get() == std::vector<int>{0, 1, 2, 3});
  }
  SECTION("a shape over the processes") {
    auto mesh = counter_class.spawn(am::actor_layout::over_processes({{"host", 2}, {"gpu", 4}}), 0);
    CHECK(mesh.size() == 8);
    CHECK(mesh.call(&counter::value).get().at({1, 3}) == 700); // rank 7
  }
  SECTION("bad layouts are refused") {
    CHECK_THROWS_AS(am::actor_layout::over_processes({{"host", 0}}), am::value_error);
    CHECK_THROWS_AS(am::actor_layout({"a", "a"}, {1, 1}, {am::actor_point{}}), am::value_error);
    CHECK_THROWS_AS(am::actor_layout({"a"}, {2}, {am::actor_point{}}), am::value_error);
  }
}

TEST_CASE("every call form answers as a local computation would", "[actor_mesh]") {
  am::runtime rt(am::test::cpu_options(4));
  auto mesh = counter_class.spawn(am::actor_layout::per_device(), 1);
  SECTION("call gathers the answers shaped like the mesh") {
    auto answers = mesh.call(&counter::add, 2).get();
    REQUIRE(answers.size() == 4);
    CHECK(answers.axis_names() == std::vector<std::string>{"host", "device"});
    for (int r = 0; r < 4; ++r)
      CHECK(answers[static_cast<std::size_t>(r)] == 1 + 100 * r + 2);
  }
  SECTION("call_one on a slice of one") {
    auto one = mesh.slice("host", 0).slice("device", 3);
    CHECK(one.size() == 1);
    CHECK(one.call_one(&counter::add, 5).get() == 306);
    CHECK(mesh.call(&counter::value).get()[3] == 306); // the same actor
    CHECK_THROWS_AS(mesh.call_one(&counter::value), am::value_error);
  }
  SECTION("a range slice keeps its axis") {
    auto two = mesh.slice("device", 1, 3);
    CHECK(two.layout().shape_string() == "{host: 1, device: 2}");
    auto values = two.call(&counter::value).get();
    CHECK(values.values() == std::vector<int>{101, 201});
    CHECK_THROWS_AS(mesh.slice("device", 4), am::value_error);
    CHECK_THROWS_AS(mesh.slice("gpu", 0), am::value_error);
    CHECK_THROWS_AS(mesh.slice("device", 2, 2), am::value_error);
  }
  SECTION("broadcast reaches every actor, in order with later calls") {
    mesh.broadcast(&counter::reset);
    mesh.broadcast(&counter::add, 7);
    CHECK(mesh.call(&counter::value).get().values() == std::vector<int>{7, 7, 7, 7});
  }
  SECTION("void endpoints called on every actor give a future<void>") {
    mesh.call(&counter::reset).get();
    CHECK(mesh.call(&counter::value).get().values() == std::vector<int>{0, 0, 0, 0});
  }
  SECTION("choose picks an idle actor over a busy one") {
    auto busy = mesh.slice("device", 0).slice("host", 0).call_one(&counter::slow, 300);
    std::map<int, int> picked;
    for (int i = 0; i < 6; ++i)
      ++picked[mesh.choose(&counter::slow, 1).get()];
    CHECK(picked.count(0) == 0);
    CHECK(busy.get() == 0);
  }
  SECTION("a member function that is no endpoint is refused") {
    CHECK_THROWS_WITH(mesh.call(&counter::not_an_endpoint), Catch::Contains("is not an endpoint of actor class 'test.counter'"));
  }
}

TEST_CASE("a class name is registered once, an endpoint name once per class", "[actor_mesh]") {
  CHECK_THROWS_AS(am::actor_class<counter>("test.counter"), am::value_error);
  CHECK_THROWS_AS(counter_class.endpoint("add", &counter::not_an_endpoint), am::value_error);
  CHECK_THROWS_AS(counter_class.endpoint("add_again", &counter::add), am::value_error);
  // Names starting with "am." are the runtime's own (a worker's part forwards its supervision
  // events under one).
  CHECK_THROWS_WITH(counter_class.endpoint("am.supervision_event", &counter::not_an_endpoint),
                    Catch::Contains("names the runtime keeps for itself"));
  CHECK_THROWS_AS(counter_class.endpoint("", &counter::not_an_endpoint), am::value_error);
}

TEST_CASE("an endpoint that throws fails its call only, and an actor fault fails the actor", "[actor_mesh]") {
  am::runtime rt(am::test::cpu_options(2));
  SECTION("a plain exception keeps its type and text, and the actor goes on") {
    auto mesh = counter_class.spawn(am::actor_layout::per_device(), 0);
    CHECK_THROWS_AS(mesh.call(&counter::throws, std::string("bad step")).get(), am::value_error);
    CHECK_THROWS_WITH(mesh.slice("device", 1).call_one(&counter::throws, std::string("bad step")).get(), "bad step");
    CHECK(mesh.call(&counter::add, 1).get().values() == std::vector<int>{1, 101});
    CHECK(mesh.supervision_events().empty());
  }
  SECTION("without restarts a fault fails the actor's later calls with a named error and tells the owner") {
    auto mesh = counter_class.spawn(am::actor_layout::per_device(), 0);
    std::atomic<int> told{0};
    mesh.on_supervision([&](const am::supervision_event&) { ++told; });
    auto first = mesh.slice("device", 1);
    CHECK_THROWS_AS(first.call_one(&counter::faults, std::string("lost my state")).get(), am::actor_fault);
    CHECK_THROWS_WITH(first.call_one(&counter::value).get(),
                      Catch::Contains("actor 'test.counter' at {host: 0, device: 1} (process 0) failed: am::actor_fault: lost my state"));
    CHECK_THROWS_AS(first.call_one(&counter::value).get(), am::actor_failure_error);
    CHECK(mesh.slice("device", 0).call_one(&counter::value).get() == 0); // the other actor goes on
    auto events = mesh.supervision_events();
    REQUIRE(events.size() == 1);
    CHECK(events[0].what == am::supervision_event::kind::failed);
    CHECK(events[0].rank == 1);
    CHECK(events[0].point == "{host: 0, device: 1}");
    CHECK(told == 1);
  }
  SECTION("the restart policy builds a fresh instance, at most N times in the window") {
    auto restarting = counter_class.supervise(am::supervision_policy{2, 60s, false});
    auto mesh = restarting.spawn(am::actor_layout::per_device(), 5).slice("device", 0);
    for (int round = 0; round < 2; ++round) {
      mesh.call_one(&counter::add, 10).get();
      CHECK_THROWS_AS(mesh.call_one(&counter::faults, std::string("crash")).get(), am::actor_fault);
      CHECK(mesh.call_one(&counter::value).get() == 5); // a fresh instance
    }
    CHECK_THROWS_AS(mesh.call_one(&counter::faults, std::string("crash")).get(), am::actor_fault);
    CHECK_THROWS_AS(mesh.call_one(&counter::value).get(), am::actor_failure_error);
    auto events = mesh.supervision_events();
    REQUIRE(events.size() == 3);
    CHECK(events[0].what == am::supervision_event::kind::restarted);
    CHECK(events[1].what == am::supervision_event::kind::restarted);
    CHECK(events[2].what == am::supervision_event::kind::failed);
  }
  SECTION("the stop policy fails every actor of the mesh") {
    auto stopping = counter_class.supervise(am::supervision_policy{0, 60s, true});
    auto mesh = stopping.spawn(am::actor_layout::per_device(), 0);
    CHECK_THROWS_AS(mesh.slice("device", 0).call_one(&counter::faults, std::string("crash")).get(), am::actor_fault);
    CHECK_THROWS_WITH(mesh.slice("device", 1).call_one(&counter::value).get(), Catch::Contains("was stopped by its policy"));
    CHECK(mesh.supervision_events().at(0).what == am::supervision_event::kind::mesh_stopped);
  }
  SECTION("a broadcast that throws is told to the owner") {
    auto mesh = counter_class.spawn(am::actor_layout::per_device(), 0);
    mesh.broadcast(&counter::throws, std::string("nobody waits"));
    mesh.call(&counter::value).get();
    auto events = mesh.supervision_events();
    REQUIRE(events.size() == 2);
    CHECK(events[0].what == am::supervision_event::kind::broadcast_failed);
    CHECK(events[0].cause == "am::value_error: nobody waits");
  }
}

TEST_CASE("a constructor that throws fails its actor's calls with the cause", "[actor_mesh]") {
  am::runtime rt(am::test::cpu_options(2));
  auto mesh = fragile_class.spawn(am::actor_layout::per_device(), true);
  CHECK_THROWS_WITH(mesh.call(&fragile::ok).get(), Catch::Contains("failed: std::invalid_argument: no data for this trainer"));
  auto events = mesh.supervision_events();
  CHECK(events.size() == 2);
  auto healthy = fragile_class.spawn(am::actor_layout::per_device(), false);
  CHECK(healthy.call(&fragile::ok).get().values() == std::vector<int>{1, 1});
}

TEST_CASE("stopping a mesh runs the calls already issued, then refuses with a named error", "[actor_mesh]") {
  am::runtime rt(am::test::cpu_options(2));
  constructed = 0;
  destroyed = 0;
  auto mesh = counter_class.spawn(am::actor_layout::per_device(), 0);
  std::vector<am::future<int>> issued;
  for (int i = 0; i < 50; ++i)
    issued.push_back(mesh.slice("device", i % 2).call_one(&counter::add, 1));
  auto stopped = mesh.stop();
  for (auto& f : issued)
    CHECK_NOTHROW(f.get(5s));
  CHECK_THROWS_WITH(mesh.call(&counter::value).get(5s), Catch::Contains("was stopped"));
  stopped.get(5s);
  CHECK(destroyed == 2);
  CHECK(constructed == 2);
}

TEST_CASE("the last handle going stops the actors, and the runtime stopping fails what is queued", "[actor_mesh]") {
  SECTION("handles") {
    am::runtime rt(am::test::cpu_options(2));
    destroyed = 0;
    am::future<int> late;
    {
      auto mesh = counter_class.spawn(am::actor_layout::per_device(), 0);
      late = mesh.slice("device", 0).call_one(&counter::slow, 50);
    }
    CHECK(late.get(5s) == 0); // issued before the last handle went
    CHECK(eventually([] { return destroyed == 2; }));
  }
  SECTION("runtime") {
    std::vector<am::future<int>> queued;
    std::optional<am::actor_mesh<counter>> kept;
    {
      am::runtime rt(am::test::cpu_options(2));
      kept = counter_class.spawn(am::actor_layout::per_device(), 0);
      for (int i = 0; i < 20; ++i)
        queued.push_back(kept->slice("device", 0).call_one(&counter::slow, 20));
    }
    int failed = 0;
    for (auto& f : queued) {
      try {
        f.get(5s);
      } catch (const am::runtime_error&) {
        ++failed;
      }
    }
    CHECK(failed > 0); // the runtime did not wait for all 20 x 20 ms
    CHECK_THROWS_AS(kept->call(&counter::value).get(5s), am::runtime_error);
    kept.reset(); // after the runtime: must not touch its actor system
  }
}

TEST_CASE("each thread's calls to one actor run in the order sent", "[actor_mesh]") {
  am::runtime rt(am::test::cpu_options(2));
  struct recorder {
    std::map<int, int> last;
    bool in_order = true;
    void note(int thread, int k) {
      auto it = last.find(thread);
      if (it != last.end() && it->second + 1 != k)
        in_order = false;
      last[thread] = k;
    }
    bool ok() const { return in_order; }
  };
  static const auto recorder_class =
    am::actor_class<recorder>("test.recorder").endpoint("note", &recorder::note).endpoint("ok", &recorder::ok);
  auto mesh = recorder_class.spawn(am::actor_layout::per_device());
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 500; ++k) {
        if (k % 3 == 0)
          mesh.broadcast(&recorder::note, t, k);
        else
          mesh.call(&recorder::note, t, k);
      }
    });
  for (auto& th : threads)
    th.join();
  CHECK(mesh.call(&recorder::ok).get(10s).values() == std::vector<bool>{true, true});
}
