// Coroutines: am::task driven by sync_wait, co_await on futures, tasks and arrays, and coroutine
// endpoints of actor meshes: an actor serves other calls while one awaits, calls itself without a
// deadlock, fails, restarts and stops with calls suspended, and the runtime stops under them.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <coroutine>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include "support/eventually.hpp"
#include "support/cpu_options.hpp"

using namespace std::chrono_literals;

namespace {

/// A future the test resolves when it wants: what a suspended coroutine endpoint awaits.
class gate {
public:
  am::future<int> wait() {
    std::lock_guard<std::mutex> guard(mutex_);
    return promise_.get_future();
  }
  void open(int v) {
    std::lock_guard<std::mutex> guard(mutex_);
    promise_.set_value(v);
  }
  void reset() {
    std::lock_guard<std::mutex> guard(mutex_);
    promise_ = am::promise<int>();
  }

private:
  std::mutex mutex_;
  am::promise<int> promise_;
};

gate the_gate;
std::atomic<int> waiting{0}; // coroutine calls suspended at the gate

struct worker {
  explicit worker(int base) : base(base) {}
  int plain(int k) { return base + k; }
  am::task<int> at_gate(int k) {
    ++waiting;
    int v = co_await the_gate.wait();
    --waiting;
    co_return base + k + v;
  }
  am::task<std::string> echo(const std::string& text) { co_return text + "!"; } // never suspends
  am::task<void> nothing() { co_return; }
  am::task<int> throws(std::string text) {
    co_await the_gate.wait();
    throw am::value_error(text);
  }
  am::task<int> faults_now() {
    throw am::actor_fault("broken");
    co_return 0;
  }
  am::task<int> self_call(am::actor_mesh<worker> me) {
    // Calls its own actor and awaits the answer: the actor runs the call while this one waits.
    int a = co_await me.call_one(&worker::plain, 1);
    int b = co_await me.call_one(&worker::plain, 2);
    co_return a + b;
  }
  am::task<int> nested(int depth) { co_return co_await count_down(depth); }
  static am::task<int> count_down(int n) {
    if (n == 0)
      co_return 0;
    co_return 1 + co_await count_down(n - 1);
  }
  am::task<double> sum_on_device(std::vector<float> values) {
    auto x = am::device_put(am::host_array::from_vector(values), am::this_actor().point.devices.at(0));
    auto y = co_await am::ready(am::multiply(x, x));
    co_return static_cast<double>(y.to_host().data<float>()[values.size() - 1]);
  }
  int base;
};

const auto worker_class = am::actor_class<worker>("test.coroutine_worker")
                            .endpoint("plain", &worker::plain)
                            .endpoint("at_gate", &worker::at_gate)
                            .endpoint("echo", &worker::echo)
                            .endpoint("nothing", &worker::nothing)
                            .endpoint("throws", &worker::throws)
                            .endpoint("faults_now", &worker::faults_now)
                            .endpoint("self_call", &worker::self_call)
                            .endpoint("nested", &worker::nested)
                            .endpoint("sum_on_device", &worker::sum_on_device);

using am::testing::eventually;

am::task<int> add_later(am::future<int> a, am::future<int> b) {
  int x = co_await a;
  int y = co_await b;
  co_return x + y;
}

am::task<void> fails_after(am::future<int> a) {
  co_await a;
  throw std::out_of_range("past the end");
}

/// An eager coroutine of another library: awaiting an am::future in it has no home to resume at.
struct eager {
  struct promise_type {
    std::exception_ptr* out = nullptr;
    eager get_return_object() { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() {}
  };
};

eager await_without_home(am::future<int> f, std::string* error) {
  try {
    co_await f;
  } catch (const am::runtime_error& e) {
    *error = e.what();
  }
}

} // namespace

TEST_CASE("sync_wait drives a task that awaits futures, tasks and errors", "[coroutines]") {
  SECTION("futures resolved later by another thread") {
    am::promise<int> a, b;
    std::thread resolver([&] {
      std::this_thread::sleep_for(5ms);
      a.set_value(40);
      b.set_value(2);
    });
    CHECK(am::sync_wait(add_later(a.get_future(), b.get_future())) == 42);
    resolver.join();
  }
  SECTION("futures already resolved") {
    am::promise<int> a, b;
    a.set_value(1);
    b.set_value(2);
    CHECK(am::sync_wait(add_later(a.get_future(), b.get_future())) == 3);
  }
  SECTION("nested tasks") { CHECK(am::sync_wait(worker::count_down(1000)) == 1000); }
  SECTION("an exception thrown after a suspension reaches the caller with its type") {
    am::promise<int> a;
    std::thread resolver([&] { a.set_value(0); });
    CHECK_THROWS_AS(am::sync_wait(fails_after(a.get_future())), std::out_of_range);
    resolver.join();
  }
  SECTION("an awaited future's error is thrown at the co_await") {
    am::promise<int> a, b;
    a.set_error(std::make_exception_ptr(am::value_error("bad input")));
    b.set_value(1);
    CHECK_THROWS_WITH(am::sync_wait(add_later(a.get_future(), b.get_future())), "bad input");
  }
  SECTION("a broken promise fails the await instead of hanging") {
    std::optional<am::promise<int>> a(std::in_place);
    auto f = a->get_future();
    std::thread dropper([&] {
      std::this_thread::sleep_for(2ms);
      a.reset();
    });
    am::promise<int> b;
    b.set_value(1);
    CHECK_THROWS_AS(am::sync_wait(add_later(f, b.get_future())), am::runtime_error);
    dropper.join();
  }
  SECTION("a timeout") {
    am::promise<int> never, b;
    CHECK_THROWS_AS(am::sync_wait(add_later(never.get_future(), b.get_future()), 20ms), am::timeout_error);
    never.set_value(1); // resumes nothing: the task is gone
  }
  SECTION("an empty task") { CHECK_THROWS_AS(am::sync_wait(am::task<int>()), am::runtime_error); }
  SECTION("awaiting outside an actor and outside sync_wait is refused with an error") {
    am::promise<int> p;
    std::string error;
    await_without_home(p.get_future(), &error);
    CHECK(error.find("needs a coroutine run by an actor's endpoint or by am::sync_wait") != std::string::npos);
  }
}

TEST_CASE("coroutine endpoints answer like plain ones, in one call and in a gather", "[coroutines][actor_mesh]") {
  am::runtime rt(am::test::cpu_options(2));
  auto workers = worker_class.spawn(am::actor_layout::per_device(), 10);
  CHECK(workers.slice("device", 0).call_one(&worker::echo, std::string("hi")).get() == "hi!");
  workers.call(&worker::nothing).get();
  CHECK(workers.call(&worker::nested, 50).get()[1] == 50);
  CHECK(workers.slice("device", 1).call_one(&worker::self_call, workers.slice("device", 1)).get(5s) == 11 + 12);
  auto sums = workers.call(&worker::sum_on_device, std::vector<float>{1, 2, 3}).get(10s);
  CHECK(sums[0] == 9.0);
  CHECK(sums[1] == 9.0);
  SECTION("a caller awaits a call in its own task") {
    auto caller = [](am::actor_mesh<worker> w) -> am::task<int> {
      auto all = co_await w.call(&worker::plain, 1);
      co_return all[0] + all[1];
    };
    CHECK(am::sync_wait(caller(workers), 5s) == 22);
  }
}

TEST_CASE("an actor serves other calls while a coroutine endpoint awaits", "[coroutines][actor_mesh]") {
  am::runtime rt(am::test::cpu_options(1));
  the_gate.reset();
  waiting = 0;
  auto one = worker_class.spawn(am::actor_layout::per_device(), 100);
  auto suspended = one.call_one(&worker::at_gate, 1);
  auto also = one.call_one(&worker::at_gate, 2);
  REQUIRE(eventually([] { return waiting.load() == 2; }));
  CHECK(one.call_one(&worker::plain, 5).get(5s) == 105); // served meanwhile
  CHECK_FALSE(suspended.ready());
  the_gate.open(1000);
  CHECK(suspended.get(5s) == 1101);
  CHECK(also.get(5s) == 1102);
}

TEST_CASE("coroutine endpoints fail, fault and restart", "[coroutines][actor_mesh]") {
  am::runtime rt(am::test::cpu_options(1));
  the_gate.reset();
  waiting = 0;
  SECTION("an exception after a suspension fails that call only") {
    auto one = worker_class.spawn(am::actor_layout::per_device(), 0);
    auto failing = one.call_one(&worker::throws, std::string("no such step"));
    the_gate.open(0);
    CHECK_THROWS_WITH(failing.get(5s), "no such step");
    CHECK(one.call_one(&worker::plain, 1).get(5s) == 1);
  }
  SECTION("a fault restarts the actor; a call suspended on the old instance fails with a named error") {
    auto one = worker_class.supervise(am::supervision_policy{3, 60s, false}).spawn(am::actor_layout::per_device(), 0);
    auto suspended = one.call_one(&worker::at_gate, 1);
    REQUIRE(eventually([] { return waiting.load() == 1; }));
    CHECK_THROWS_AS(one.call_one(&worker::faults_now).get(5s), am::actor_fault);
    // Failed by the restart itself, before what it awaits arrives.
    CHECK_THROWS_WITH(suspended.get(5s), Catch::Contains("was restarted while this call awaited"));
    the_gate.open(0); // resumes nothing: the old instance's frame is gone
    CHECK(one.call_one(&worker::plain, 2).get(5s) == 2); // the restarted instance
    bool restarted = false;
    for (auto& e : one.supervision_events())
      restarted = restarted || e.what == am::supervision_event::kind::restarted;
    CHECK(restarted);
  }
  SECTION("a broadcast to a coroutine endpoint that throws is reported to the owner") {
    auto one = worker_class.spawn(am::actor_layout::per_device(), 0);
    one.broadcast(&worker::throws, std::string("lost step"));
    the_gate.open(0);
    REQUIRE(eventually([&] { return !one.supervision_events().empty(); }));
    CHECK(one.supervision_events()[0].what == am::supervision_event::kind::broadcast_failed);
  }
}

TEST_CASE("stopping a mesh waits for its suspended coroutine calls", "[coroutines][actor_mesh]") {
  am::runtime rt(am::test::cpu_options(1));
  the_gate.reset();
  waiting = 0;
  auto one = worker_class.spawn(am::actor_layout::per_device(), 7);
  auto suspended = one.call_one(&worker::at_gate, 0);
  REQUIRE(eventually([] { return waiting.load() == 1; }));
  auto stopped = one.stop();
  CHECK_FALSE(stopped.wait_for(20ms)); // the call already issued is still running
  CHECK_THROWS_AS(one.call_one(&worker::plain, 1).get(5s), am::actor_failure_error);
  the_gate.open(3);
  CHECK(suspended.get(5s) == 10);
  CHECK(stopped.wait_for(5s));
}

TEST_CASE("the runtime stopping under a suspended coroutine call fails it", "[coroutines][actor_mesh]") {
  the_gate.reset();
  waiting = 0;
  am::future<int> suspended;
  {
    am::runtime rt(am::test::cpu_options(1));
    auto one = worker_class.spawn(am::actor_layout::per_device(), 0);
    suspended = one.call_one(&worker::at_gate, 0);
    REQUIRE(eventually([] { return waiting.load() == 1; }));
  }
  // Failed when its actor exited, not when (or if) what it awaits arrives.
  CHECK_THROWS_WITH(suspended.get(5s), Catch::Contains("The actormesh runtime has stopped"));
  the_gate.open(0); // resumes nothing: the frame went with the actor
}

TEST_CASE("a coroutine call resumed while the runtime stops fails instead of running", "[coroutines][actor_mesh]") {
  // The gate opens from another thread while the runtime goes: each call is answered once,
  // with its value or with the runtime's stop, whichever comes first.
  for (int round = 0; round < 20; ++round) {
    the_gate.reset();
    waiting = 0;
    std::vector<am::future<int>> calls;
    std::thread opener;
    {
      am::runtime rt(am::test::cpu_options(1));
      auto one = worker_class.spawn(am::actor_layout::per_device(), 0);
      for (int k = 0; k < 4; ++k)
        calls.push_back(one.call_one(&worker::at_gate, k));
      REQUIRE(eventually([] { return waiting.load() == 4; }));
      opener = std::thread([] { the_gate.open(1); });
    }
    opener.join();
    for (int k = 0; k < 4; ++k) {
      std::optional<int> value;
      std::string error;
      try {
        value = calls[k].get(5s);
      } catch (const am::runtime_error& e) {
        error = e.what();
      }
      if (value)
        CHECK(*value == k + 1);
      else
        CHECK_THAT(error, Catch::Contains("The actormesh runtime has stopped"));
    }
  }
}
