// Traces of a runtime started with the trace option in code (options::trace): colocated calls and
// their bodies, host tasks, eager programs and user scopes from several threads at once, and a stop
// while calls are in flight; the file is written at stop, valid, well nested, and its counts match.
#include <actormesh.hpp>

#include "support/programs.hpp"
#include "support/trace_file.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using am::testing::read_trace_file;
using am::testing::trace_temp_path;

namespace {

am::options traced(const std::string& path, int devices) {
  am::options o;
  o.cpu_devices = devices;
  o.use_gpus = false;
  o.trace = path;
  return o;
}

const auto traced_add = am::colocated_python("test.trace.add", [](const am::array& x) {
  am::trace_scope inside("inside the body");
  return x + 1;
});

} // namespace

TEST_CASE("trace: colocated calls, host tasks and scopes from several threads", "[unit][trace]") {
  const auto path = trace_temp_path("colocated.json");
  constexpr int threads = 4, calls = 25;
  {
    am::runtime rt(traced(path, 4));
    CHECK(am::trace_enabled());
    auto cpu = am::colocated_cpu_devices(am::devices());
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k)
      pool.emplace_back([&] {
        am::mesh m({1}, {cpu[0]}, {"x"});
        auto x = am::device_put(am::host_array::scalar(1), am::make_named_sharding(m, am::P()));
        for (int i = 0; i < calls; ++i) {
          am::trace_scope step("step");
          x = traced_add(x);
        }
        x.block_until_ready();
      });
    for (auto& t : pool)
      t.join();
  } // stop writes the trace
  CHECK_FALSE(am::trace_enabled());
  auto t = read_trace_file(path);
  CHECK(t.nesting_error.empty());
  CHECK(t.count("user", "step") == threads * calls);
  CHECK(t.count("colocated", "colocated call") == threads * calls);
  CHECK(t.count("colocated", "colocated body") == threads * calls);
  CHECK(t.count("user", "inside the body") == threads * calls);
  CHECK(t.count("host", "host task") >= threads * calls);
  // Every body ran on a host lane, whose track is named after its caller.
  for (auto& e : t.events)
    if (e.name == "colocated body")
      CHECK_THAT(t.track_names.at({e.pid, e.tid}), Catch::StartsWith("host lane (caller "));
  std::filesystem::remove(path);
}

TEST_CASE("trace: a stop while calls are in flight still writes a valid trace", "[unit][trace]") {
  const auto path = trace_temp_path("stop.json");
  for (int round = 0; round < 3; ++round) {
    am::runtime rt(traced(path, 8));
    auto devs = am::devices();
    am::mesh m({8}, devs, {"x"});
    auto x = am::device_put(am::host_array::zeros({8, 64}, am::dtype::float32), am::make_named_sharding(m, am::P("x")));
    std::vector<std::thread> pool;
    for (int k = 0; k < 4; ++k)
      pool.emplace_back([&, x]() mutable {
        try {
          for (int i = 0; i < 2000; ++i)
            x = x + 1.0f;
        } catch (const am::runtime_error&) {
          // stopped under it: expected
        }
      });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    rt.stop();
    for (auto& t : pool)
      t.join();
    auto t = read_trace_file(path);
    CHECK(t.nesting_error.empty());
    CHECK(t.count("device") > 0);
  }
  std::filesystem::remove(path);
}

TEST_CASE("trace: a call waiting for its input is traced as admit, stall, resume, then its program",
          "[unit][trace]") {
  const auto path = trace_temp_path("stall.json");
  {
    am::runtime rt(traced(path, 2));
    auto d = am::devices()[1];
    am::promise<am::buffer_ref> input; // resolved later: the call stalls on device 1
    auto out = am::execute(d, am::testing::step_program(1), {input.get_future()})[0];
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // Uploaded by another thread: this thread's later calls to the device wait behind the stalled one.
    std::thread other([&] {
      std::vector<std::byte> bytes(4 * sizeof(std::int64_t));
      input.set_value(am::upload(d, bytes, {am::dtype::int64, {4}}).get(std::chrono::seconds(10)));
    });
    other.join();
    out.get(std::chrono::seconds(10));
  }
  auto t = read_trace_file(path);
  CHECK(t.nesting_error.empty());
  CHECK(t.count("lane", "stall") == 1);
  CHECK(t.count("lane", "resume") >= 1);
  double stall = -1, resume = -1, program = -1;
  for (auto& e : t.events) {
    if (e.name == "stall")
      stall = e.ts;
    if (e.name == "resume" && resume < 0)
      resume = e.ts;
    if (e.name == "step1")
      program = e.ts;
  }
  CHECK(stall >= 0);
  CHECK(resume >= stall + 40000); // the input came about 50 ms later
  CHECK(program >= resume);
  // The stalled call's arrow still ends at the span that ran it, after the wait.
  std::size_t into_program = 0;
  for (auto& f : t.flows)
    if (f.ph == "f")
      if (const auto* ran = am::testing::enclosing_span(t.events, f.pid, f.tid, f.ts); ran && ran->name == "step1")
        ++into_program;
  CHECK(into_program == 1);
  std::filesystem::remove(path);
}

TEST_CASE("trace: a jitted operation's spans carry its name on every device, the device and stage in args",
          "[unit][trace]") {
  const auto path = trace_temp_path("operation_names.json");
  constexpr int calls = 3;
  {
    am::runtime rt(traced(path, 4));
    am::mesh m({4}, am::devices(), {"x"});
    auto x = am::device_put(am::host_array::zeros({8, 2}, am::dtype::float32), am::make_named_sharding(m, am::P("x")));
    auto f = am::jit([](const am::array& a) { return a * 2.0f + 1.0f; }, "scaled_plus_one");
    for (int i = 0; i < calls; ++i)
      x = f(x);
    x.block_until_ready();
  }
  auto t = read_trace_file(path);
  std::set<std::int64_t> devices;
  std::size_t spans = 0;
  for (auto& e : t.events) {
    if (e.cat != "device" || e.ph != "X" || e.name.find("scaled_plus_one") == std::string::npos)
      continue;
    ++spans;
    CHECK(e.name == "scaled_plus_one"); // not scaled_plus_one.s0.d2: one name, one colour
    devices.insert(e.args.at("device").get<std::int64_t>());
    CHECK(e.args.at("stage").get<std::int64_t>() >= 0);
    CHECK_THAT(e.args.at("detail").get<std::string>(), Catch::Contains("in: float32(2, 2) -> out: float32(2, 2)"));
  }
  CHECK(spans == 4 * calls);
  CHECK(devices == std::set<std::int64_t>{0, 1, 2, 3});
  std::filesystem::remove(path);
}

TEST_CASE("trace: an arrow runs from each dispatch on the caller's thread to the device span that ran it",
          "[unit][trace]") {
  const auto path = trace_temp_path("flows.json");
  constexpr int calls = 3;
  {
    am::runtime rt(traced(path, 4));
    am::mesh m({4}, am::devices(), {"x"});
    auto x = am::device_put(am::host_array::zeros({8, 2}, am::dtype::float32), am::make_named_sharding(m, am::P("x")));
    auto f = am::jit([](const am::array& a) { return a + 1.0f; }, "flow_step");
    for (int i = 0; i < calls; ++i)
      x = f(x);
    x.block_until_ready();
  }
  auto t = read_trace_file(path);
  REQUIRE(t.nesting_error.empty());
  std::map<std::string, const am::testing::read_event*> starts;
  for (auto& e : t.flows) {
    CHECK(e.name == "call");
    CHECK(e.cat == "flow");
    if (e.ph == "s")
      CHECK(starts.emplace(e.id, &e).second); // one start per id
  }
  std::size_t into_steps = 0;
  std::set<std::int64_t> devices;
  for (auto& end : t.flows) {
    if (end.ph != "f")
      continue;
    CHECK(end.binds_enclosing);
    const auto* ran = am::testing::enclosing_span(t.events, end.pid, end.tid, end.ts);
    REQUIRE(ran != nullptr);
    CHECK(ran->cat == "device");
    auto start = starts.find(end.id);
    REQUIRE(start != starts.end()); // every arrow that ends started somewhere
    const auto* dispatch = am::testing::enclosing_span(t.events, start->second->pid, start->second->tid,
                                                       start->second->ts);
    REQUIRE(dispatch != nullptr);
    CHECK(dispatch->cat == "call");
    CHECK(start->second->ts <= end.ts); // dispatched before it ran
    CHECK(t.track_names.at({start->second->pid, start->second->tid}).rfind("caller ", 0) == 0);
    if (ran->name == "flow_step") {
      ++into_steps;
      devices.insert(ran->args.at("device").get<std::int64_t>());
      CHECK(dispatch->name == "dispatch");
      CHECK(dispatch->args.at("detail").get<std::string>() == "flow_step");
    }
  }
  CHECK(into_steps == 4 * calls); // one arrow into every device's copy of every call
  CHECK(devices == std::set<std::int64_t>{0, 1, 2, 3});
  std::filesystem::remove(path);
}

TEST_CASE("trace: counter tracks follow the devices' queue depths, and a killed process keeps its last flush",
          "[unit][trace]") {
  const auto path = trace_temp_path("counters.json");
  ::setenv("AM_TRACE_COUNTER_MS", "1", 1);
  ::setenv("AM_TRACE_FLUSH_SECONDS", "1", 1);
  {
    am::runtime rt(traced(path, 2));
    ::unsetenv("AM_TRACE_COUNTER_MS");
    ::unsetenv("AM_TRACE_FLUSH_SECONDS");
    auto d = am::devices()[1];
    am::value_type t{am::dtype::int64, {4}};
    auto x = am::upload(d, am::testing::to_bytes(std::vector<std::int64_t>{1, 1, 1, 1}), t);
    for (int i = 0; i < 20000; ++i) // queued faster than run (tens of ms): the depth rises, then falls to 0
      x = am::execute(d, am::testing::step_program(1), {x})[0];
    am::fetch(d, x).get(std::chrono::seconds(30));
    // The periodic flush wrote the trace so far, before any stop: what a killed process leaves.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!std::filesystem::exists(path) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE(std::filesystem::exists(path));
    auto flushed = read_trace_file(path);
    CHECK(flushed.nesting_error.empty());
    CHECK(flushed.count("device") > 0);
  }
  auto t = read_trace_file(path);
  std::int64_t highest = -1, last = -1;
  for (auto& c : t.counters)
    if (c.name == "queue depth CpuDevice(id=1)") {
      last = c.args.at("calls").get<std::int64_t>();
      highest = std::max(highest, last);
    }
  CHECK(highest > 0);
  CHECK(last == 0);
  bool lanes = false, transfers = false;
  for (auto& c : t.counters) {
    lanes = lanes || c.name == "host lanes: tasks queued";
    transfers = transfers || c.name == "transfers: bytes in flight";
  }
  CHECK(lanes);
  CHECK(transfers);
  std::filesystem::remove(path);
}
