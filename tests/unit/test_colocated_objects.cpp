// Colocated classes: the wrapper records the constructor's arguments; the instance is built on the
// first method call, one per (wrapper, device set), as an actor of its own that runs the method
// calls in turn; it is destroyed asynchronously after the last wrapper goes and after the calls
// already issued; a constructor's exception reaches every later caller; methods specialize.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include "support/colocated_values.hpp"
#include "support/cpu_options.hpp"

using namespace std::chrono_literals;

namespace {

using am::testing::same_as_first;
using am::testing::value_of;

/// What the instances did, for the test to look at.
struct journal {
  std::mutex mutex;
  std::vector<std::string> events;
  std::atomic<int> created{0};
  std::atomic<int> destroyed{0};
  std::atomic<int> calls{0};
  std::atomic<int> calls_at_destruction{-1};
  std::atomic<int> active{0};
  std::atomic<int> max_active{0};
  std::atomic<bool> gate_closed{false};

  void reset() {
    std::lock_guard<std::mutex> guard(mutex);
    events.clear();
    created = destroyed = calls = active = max_active = 0;
    calls_at_destruction = -1;
    gate_closed = false;
  }
  void note(const std::string& e) {
    std::lock_guard<std::mutex> guard(mutex);
    events.push_back(e);
  }
  /// Waits (bounded) until `n` instances have been destroyed: destruction is asynchronous.
  bool wait_destroyed(int n) {
    for (int i = 0; i < 30000 && destroyed < n; ++i)
      std::this_thread::sleep_for(1ms);
    return destroyed == n;
  }
};
journal jr;

struct adder {
  explicit adder(int increment) : increment(increment) {
    ++jr.created;
    jr.note("created");
  }
  ~adder() {
    jr.calls_at_destruction = jr.calls.load();
    jr.note("destroyed");
    ++jr.destroyed; // last: the test reads the journal once it sees this
  }
  am::array add(const am::array& x) {
    ++jr.calls;
    return x + increment;
  }
  am::array slow_add(const am::array& x) {
    std::this_thread::sleep_for(20ms);
    ++jr.calls;
    return x + increment;
  }
  am::array gated_add(const am::array& x) {
    for (int i = 0; i < 30000 && jr.gate_closed; ++i)
      std::this_thread::sleep_for(1ms);
    ++jr.calls;
    return x + increment;
  }
  am::array note_value(const am::array& x) {
    jr.note(std::to_string(x.to_host().item<int>()));
    return x;
  }
  am::array count(const am::array& x) {
    ++seen;
    return x * 0 + seen;
  }
  am::array probe(const am::array& x) {
    int now = ++jr.active;
    int top = jr.max_active;
    while (now > top && !jr.max_active.compare_exchange_weak(top, now)) {
    }
    std::this_thread::sleep_for(5ms);
    --jr.active;
    return x;
  }
  int increment;
  int seen = 0;
};

struct failing {
  explicit failing(int) { throw am::value_error("the constructor failed"); }
  am::array id(const am::array& x) { return x; }
};

const auto adder_class = am::colocated_python_class<adder>("test.adder")
                           .def("add", &adder::add)
                           .def("slow_add", &adder::slow_add)
                           .def("gated_add", &adder::gated_add)
                           .def("count", &adder::count)
                           .def("note_value", &adder::note_value)
                           .def("probe", &adder::probe);

const auto failing_class = am::colocated_python_class<failing>("test.failing").def("id", &failing::id);

using unary = am::array(am::array);

const auto note_value = am::colocated_python("test.objects.note_value", [](const am::array& x) {
  jr.note(std::to_string(x.to_host().item<int>()));
  return x;
});

} // namespace

TEST_CASE("colocated object: gone before the next call of the thread that let it go returns, after its calls",
          "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  jr.reset();
  {
    auto a = adder_class(1);
    CHECK(value_of(a.call(&adder::add, am::testing::scalar_on_device(1))) == 2);
  }
  CHECK(value_of(note_value(am::testing::scalar_on_device(7))) == 7); // this thread's next colocated call
  CHECK(jr.destroyed == 1);                       // JAX: deleted before the next call
  // Calls still in flight when the wrappers go run first; the instance goes after them.
  jr.reset();
  {
    auto a = adder_class(1);
    auto slow = a.method(&adder::slow_add).specialize({.out_specs_fn = same_as_first}); // asynchronous
    for (int i = 0; i < 3; ++i)
      slow(am::testing::scalar_on_device(i));
  } // 60 ms of calls still queued
  note_value(am::testing::scalar_on_device(1));
  CHECK(jr.destroyed == 1);
  CHECK(jr.calls_at_destruction == 3);
  // A wrapper dropped on another thread: that thread owes it, this one's calls do not wait.
  jr.reset();
  std::thread([] {
    auto a = adder_class(1);
    CHECK(value_of(a.call(&adder::add, am::testing::scalar_on_device(1))) == 2);
    note_value(am::testing::scalar_on_device(2)); // owes nothing yet: the wrapper is alive
  }).join();
  CHECK(jr.wait_destroyed(1)); // gone all the same, asynchronously
}

TEST_CASE("colocated object: the seed's Adder is created at the first call and destroyed after the wrapper",
          "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  jr.reset();
  {
    auto a = adder_class(1);
    CHECK(jr.created == 0); // only the argument is recorded
    auto y = a.method<unary>("add")(am::testing::scalar_on_device(1));
    CHECK(jr.created == 1);
    CHECK(value_of(y) == 2);
  }
  REQUIRE(jr.wait_destroyed(1));
  std::lock_guard<std::mutex> guard(jr.mutex);
  CHECK(jr.events == std::vector<std::string>{"created", "destroyed"});
}

TEST_CASE("colocated object: a wrapper never called creates and destroys nothing", "[unit][colocated]") {
  jr.reset();
  {
    am::runtime rt(am::test::cpu_options(1));
    { auto a = adder_class(1); }
    auto b = adder_class(2);
    rt.stop();
  }
  CHECK(jr.created == 0);
  CHECK(jr.destroyed == 0);
}

TEST_CASE("colocated object: one instance per device set, shared by the wrapper's copies", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  jr.reset();
  {
    auto a = adder_class(10);
    auto copy = a;
    auto add = a.method<unary>("add");
    CHECK(value_of(add(am::testing::scalar_on_device(1, 0))) == 11);
    CHECK(value_of(copy.method<unary>("add")(am::testing::scalar_on_device(2, 0))) == 12);
    CHECK(jr.created == 1);
    CHECK(value_of(add(am::testing::scalar_on_device(3, 1))) == 13); // another device set: another instance
    CHECK(jr.created == 2);
    auto counter = copy.method<unary>("count");
    CHECK(value_of(counter(am::testing::scalar_on_device(0, 0))) == 1); // state lives in the instance, across calls
    CHECK(value_of(counter(am::testing::scalar_on_device(0, 0))) == 2);
    CHECK(value_of(counter(am::testing::scalar_on_device(0, 1))) == 1);
  }
  REQUIRE(jr.wait_destroyed(2));
  CHECK(jr.created == 2);
}

TEST_CASE("colocated object: a copy keeps the instance alive", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  jr.reset();
  std::optional<am::colocated_object<adder>> a(adder_class(1));
  auto b = *a;
  CHECK(value_of(a->method<unary>("add")(am::testing::scalar_on_device(1))) == 2);
  a.reset();
  CHECK(value_of(b.method<unary>("add")(am::testing::scalar_on_device(2))) == 3); // the same instance still serves
  CHECK(jr.created == 1);
  CHECK(jr.destroyed == 0);
}

TEST_CASE("colocated object: destroyed only after the calls already issued", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  jr.reset();
  std::vector<am::array> outs;
  {
    auto a = adder_class(1);
    auto slow = a.method<unary>("slow_add").specialize({.out_specs_fn = same_as_first}); // asynchronous
    for (int i = 0; i < 5; ++i)
      outs.push_back(slow(am::testing::scalar_on_device(i)));
  } // every wrapper is gone while the calls are still queued
  REQUIRE(jr.wait_destroyed(1));
  CHECK(jr.calls_at_destruction == 5);
  for (int i = 0; i < 5; ++i)
    CHECK(value_of(outs[static_cast<std::size_t>(i)]) == i + 1);
}

TEST_CASE("colocated object: a constructor's exception reaches every later caller", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  auto f = failing_class(0);
  auto id = f.method<unary>("id");
  for (int i = 0; i < 2; ++i)
    CHECK_THROWS_WITH(id(am::testing::scalar_on_device(1)), "the constructor failed");
  auto async_id = id.specialize({.out_specs_fn = same_as_first});
  auto y = async_id(am::testing::scalar_on_device(1));
  CHECK_THROWS_WITH(y.block_until_ready(), "the constructor failed");
}

TEST_CASE("colocated object: a specialized method is asynchronous from its first call", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  jr.reset();
  auto a = adder_class(1);
  auto add = a.method<unary>("gated_add").specialize({.out_specs_fn = same_as_first});
  jr.gate_closed = true;
  auto y = add(am::testing::scalar_on_device(4));
  CHECK(jr.calls == 0); // returned while the method waits
  jr.gate_closed = false;
  CHECK(value_of(y) == 5);
  CHECK(jr.calls == 1);
}

TEST_CASE("colocated object: unknown methods and other signatures are refused", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  auto a = adder_class(1);
  CHECK_THROWS_WITH(a.method<unary>("sub"), "'test.adder' object has no attribute 'sub'");
  CHECK_THROWS_AS(a.method<am::array(am::array, am::array)>("add"), am::type_error);
  CHECK_THROWS_AS(am::colocated_python_class<adder>("test.adder"), am::value_error);
}

TEST_CASE("colocated object: one instance runs one call at a time, whoever calls", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  jr.reset();
  auto a = adder_class(1);
  auto probe = a.method<unary>("probe").specialize({.out_specs_fn = same_as_first});
  auto x = am::testing::scalar_on_device(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      std::vector<am::array> outs;
      for (int i = 0; i < 10; ++i)
        outs.push_back(probe(x));
      for (auto& y : outs)
        y.block_until_ready();
    });
  for (auto& t : threads)
    t.join();
  CHECK(jr.max_active == 1);
}

TEST_CASE("colocated object: stopping the runtime destroys the live instances", "[unit][colocated]") {
  jr.reset();
  std::optional<am::colocated_object<adder>> a;
  {
    am::runtime rt(am::test::cpu_options(1));
    a.emplace(adder_class(1));
    CHECK(value_of(a->method<unary>("add")(am::testing::scalar_on_device(1))) == 2);
  }
  CHECK(jr.destroyed == 1);
  a.reset(); // the wrapper outlives its runtime: letting go is harmless
  CHECK(jr.destroyed == 1);
}

TEST_CASE("colocated object: a thread's function and method calls run in the order issued", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  jr.reset();
  auto a = adder_class(0);
  auto method = a.method<unary>("note_value").specialize({.out_specs_fn = same_as_first});
  auto function = note_value.specialize({.out_specs_fn = same_as_first});
  std::vector<am::array> outs;
  std::vector<std::string> expected{"created"};
  for (int i = 0; i < 20; ++i) {
    outs.push_back(i % 2 ? method(am::testing::scalar_on_device(i)) : function(am::testing::scalar_on_device(i)));
    expected.push_back(std::to_string(i));
  }
  for (auto& y : outs)
    y.block_until_ready();
  // "created" comes with the first method call (i = 1), after the function call i = 0.
  expected.erase(expected.begin());
  expected.insert(expected.begin() + 1, "created");
  std::lock_guard<std::mutex> guard(jr.mutex);
  CHECK(jr.events == expected);
}
