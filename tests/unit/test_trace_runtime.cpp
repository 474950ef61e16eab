// Traces of a runtime started with the trace option in code (options::trace): colocated calls and
// their bodies, host tasks, eager programs and user scopes from several threads at once, and a stop
// while calls are in flight; the file is written at stop, valid, well nested, and its counts match.
#include <actormesh.hpp>

#include "support/programs.hpp"
#include "support/trace_file.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
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
  std::filesystem::remove(path);
}
