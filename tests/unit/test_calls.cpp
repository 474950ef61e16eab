// Calls through the lanes on CPU device actors: programs, uploads, fetches, errors, cross-device
// inputs, and host-actor lanes.
#include "support/programs.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <thread>

using namespace std::chrono_literals;
using am::testing::from_bytes;
using am::testing::to_bytes;

namespace {
am::options small_runtime() {
  am::options o;
  o.cpu_devices = 4;
  o.use_gpus = false;
  return o;
}
} // namespace

TEST_CASE("a program runs on a device and its result comes back", "[calls]") {
  am::runtime rt(small_runtime());
  auto d = am::devices()[1];
  am::value_type t{am::dtype::float32, {3}};
  am::program_builder b("axpy");
  auto x = b.parameter(t);
  auto y = b.parameter(t);
  b.output(b.binary(am::opcode::add, b.binary(am::opcode::multiply, x, b.constant(2, t)), y));
  b.output(b.unary(am::opcode::neg, x));
  auto prog = b.build();
  auto xs = am::upload(d, to_bytes(std::vector<float>{1, 2, 3}), t);
  auto ys = am::upload(d, to_bytes(std::vector<float>{10, 20, 30}), t);
  auto outs = am::execute(d, prog, {xs, ys});
  REQUIRE(outs.size() == 2);
  CHECK(from_bytes<float>(am::fetch(d, outs[0]).get(10s)) == std::vector<float>{12, 24, 36});
  CHECK(from_bytes<float>(am::fetch(d, outs[1]).get(10s)) == std::vector<float>{-1, -2, -3});
  CHECK(outs[0].get(10s)->device_id() == d.id);
}

TEST_CASE("converts, iota and integer division follow the documented rules", "[calls]") {
  am::runtime rt(small_runtime());
  auto d = am::devices()[0];
  am::program_builder b("mixed");
  auto i = b.iota({am::dtype::int32, {5}});
  auto f = b.convert(i, am::dtype::float64);
  auto half = b.binary(am::opcode::divide, f, b.constant(2, {am::dtype::float64, {5}}));
  auto back = b.convert(half, am::dtype::int64);
  auto idiv = b.binary(am::opcode::divide, i, b.constant(0, {am::dtype::int32, {5}}));
  b.output(back);
  b.output(idiv);
  b.output(b.convert(i, am::dtype::bool_));
  auto outs = am::execute(d, b.build(), {});
  CHECK(from_bytes<std::int64_t>(am::fetch(d, outs[0]).get(10s)) == std::vector<std::int64_t>{0, 0, 1, 1, 2});
  CHECK(from_bytes<std::int32_t>(am::fetch(d, outs[1]).get(10s)) == std::vector<std::int32_t>{0, 0, 0, 0, 0});
  CHECK(from_bytes<std::uint8_t>(am::fetch(d, outs[2]).get(10s)) == std::vector<std::uint8_t>{0, 1, 1, 1, 1});
}

TEST_CASE("a program given the wrong inputs fails its futures, not the device", "[calls]") {
  am::runtime rt(small_runtime());
  auto d = am::devices()[0];
  auto prog = am::testing::step_program(0);
  auto wrong = am::upload(d, to_bytes(std::vector<float>{1, 2, 3, 4}), {am::dtype::float32, {4}});
  auto out = am::execute(d, prog, {wrong})[0];
  CHECK_THROWS_AS(out.get(10s), am::value_error);
  // The failure propagates to calls that use the failed shard, and the device keeps working.
  auto next = am::execute(d, prog, {out})[0];
  CHECK_THROWS_AS(next.get(10s), am::value_error);
  auto good = am::upload(d, to_bytes(std::vector<std::int64_t>{1, 1, 1, 1}), {am::dtype::int64, {4}});
  auto ok = am::execute(d, prog, {good})[0];
  CHECK(from_bytes<std::int64_t>(am::fetch(d, ok).get(10s)) == std::vector<std::int64_t>(4, 3));
}

TEST_CASE("an upload of the wrong size is refused with a clear error", "[calls]") {
  am::runtime rt(small_runtime());
  auto s = am::upload(am::devices()[0], std::vector<std::byte>(3), {am::dtype::float32, {4}});
  CHECK_THROWS_WITH(s.get(10s), Catch::Contains("got 3 bytes"));
}

TEST_CASE("an upload written in place holds what its writer wrote, a writer's exception fails it", "[calls]") {
  am::runtime rt(small_runtime());
  auto d = am::devices()[2];
  am::value_type t{am::dtype::int32, {4}};
  std::atomic<std::size_t> asked{0};
  auto written = am::upload_written(d, t, [&asked](std::byte* destination, std::size_t size) {
    asked = size;
    const std::vector<std::int32_t> values{7, -1, 40000, 3};
    std::memcpy(destination, values.data(), size);
  });
  CHECK(from_bytes<std::int32_t>(am::fetch(d, written).get(10s)) == std::vector<std::int32_t>{7, -1, 40000, 3});
  CHECK(asked == 16);
  auto failed = am::upload_written(d, t, [](std::byte*, std::size_t) { throw am::value_error("the file is truncated"); });
  CHECK_THROWS_WITH(failed.get(10s), "the file is truncated");
  CHECK_THROWS_WITH(am::upload_written(d, t, {}), "upload_written: no writer");
  // The device goes on with the next call.
  CHECK(from_bytes<std::int32_t>(am::fetch(d, am::upload(d, to_bytes(std::vector<std::int32_t>{1, 2, 3, 4}), t)).get(10s))
        == std::vector<std::int32_t>{1, 2, 3, 4});
}

TEST_CASE("an input from another device is awaited without losing order", "[calls]") {
  am::runtime rt(small_runtime());
  auto a = am::devices()[0];
  auto b = am::devices()[1];
  // Hold device a's lane busy behind a host-controlled gate: its result feeds device b.
  am::promise<am::buffer_ref> gate;
  am::shard_future late = gate.get_future();
  auto prog = am::testing::step_program(0);
  auto on_b = am::execute(b, prog, {late})[0];
  auto after = am::execute(b, prog, {on_b})[0];
  CHECK_FALSE(after.wait_for(50ms));
  auto src = am::upload(a, to_bytes(std::vector<std::int64_t>{5, 5, 5, 5}), {am::dtype::int64, {4}});
  gate.set_value(src.get(10s));
  CHECK(from_bytes<std::int64_t>(am::fetch(b, after).get(10s))
        == std::vector<std::int64_t>(4, am::testing::expected_chain(5, 0, 1) * 3));
}

TEST_CASE("host calls of one thread run in order, different threads run concurrently", "[calls][host]") {
  am::runtime rt(small_runtime());
  std::vector<int> seen;
  std::vector<am::future<void>> fs;
  for (int i = 0; i < 100; ++i)
    fs.push_back(am::host_call([&seen, i] { seen.push_back(i); }));
  for (auto& f : fs)
    f.get(10s);
  std::vector<int> expected(100);
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(seen == expected);

  // Thread A's call waits for thread B's call to start: only concurrent lanes let it finish.
  am::promise<void> b_started;
  auto b_started_f = b_started.get_future();
  std::atomic<bool> a_saw_b{false};
  am::future<void> a_done;
  std::thread ta([&] {
    a_done = am::host_call([&] { a_saw_b = b_started_f.wait_for(10s); });
  });
  ta.join();
  std::thread tb([&] { am::host_call([&] { b_started.set_value(); }).get(10s); });
  tb.join();
  a_done.get(20s);
  CHECK(a_saw_b);
}

TEST_CASE("a host call's exception reaches its caller", "[calls][host]") {
  am::runtime rt(small_runtime());
  auto f = am::host_call([]() -> int { throw am::value_error("from the host"); });
  CHECK_THROWS_WITH(f.get(10s), "from the host");
}

TEST_CASE("calls queued when the runtime stops fail instead of hanging", "[calls]") {
  am::future<std::vector<std::byte>> last;
  {
    am::runtime rt(small_runtime());
    auto d = am::devices()[0];
    am::promise<am::buffer_ref> never;
    auto stuck = am::execute(d, am::testing::step_program(0), {never.get_future()})[0];
    last = am::fetch(d, stuck);
  }
  CHECK_THROWS_AS(last.get(10s), am::runtime_error);
}
