// Public memory statistics of devices (am::get_memory_stats), the cpu_memory_limit option and the
// out-of-memory error through the runtime.
#include "cpu_test_support.hpp"

#include "actormesh/devices/memory.hpp"

#include <map>
#include <thread>

using namespace cpu_test;

namespace {

/// Waits (briefly) until the device's bytes in use reach `bytes`: the device thread may still be
/// dropping the message that carried a buffer when its future resolves.
am::memory_stats settle(const am::device& d, std::uint64_t bytes) {
  auto s = am::get_memory_stats(d);
  for (int i = 0; i < 200 && s.bytes_in_use != bytes; ++i) {
    std::this_thread::sleep_for(5ms);
    s = am::get_memory_stats(d);
  }
  return s;
}

} // namespace

TEST_CASE("memory statistics need a running runtime and a known device", "[memory]") {
  CHECK_THROWS_AS(am::get_memory_stats(am::device{}), am::runtime_error);
  am::runtime rt(small_runtime());
  CHECK_THROWS_AS(am::get_memory_stats(am::device{99, 0, am::platform::cpu, 99}), am::value_error);
  auto s = am::get_memory_stats(am::devices()[0]);
  CHECK(s.bytes_in_use == 0);
  CHECK(s.bytes_limit == 0);
}

TEST_CASE("statistics follow buffers: in use, freed into the pool, reused without new memory", "[memory]") {
  am::runtime rt(small_runtime());
  auto d = am::devices()[1];
  const std::int64_t n = 1 << 18; // 1 MiB of float32
  am::value_type t{am::dtype::float32, {n}};
  auto before = am::get_memory_stats(d);
  {
    auto shard = am::upload(d, std::vector<std::byte>(static_cast<std::size_t>(n) * 4), t);
    shard.get(10s);
    auto s = settle(d, before.bytes_in_use + (std::uint64_t{1} << 20));
    CHECK(s.bytes_in_use == before.bytes_in_use + (std::uint64_t{1} << 20));
    CHECK(s.num_allocs == before.num_allocs + 1);
    CHECK(s.peak_bytes_in_use >= s.bytes_in_use);
  }
  auto freed = settle(d, before.bytes_in_use);
  CHECK(freed.bytes_in_use == before.bytes_in_use);
  CHECK(freed.bytes_reserved >= (std::uint64_t{1} << 20));
  {
    auto shard = am::upload(d, std::vector<std::byte>(static_cast<std::size_t>(n) * 4), t);
    shard.get(10s);
    auto s = settle(d, before.bytes_in_use + (std::uint64_t{1} << 20));
    CHECK(s.num_allocs == freed.num_allocs + 1);
    CHECK(s.bytes_in_use + s.bytes_reserved == freed.bytes_in_use + freed.bytes_reserved); // no new memory
  }
}

TEST_CASE("a device over its memory limit fails the call with RESOURCE_EXHAUSTED and keeps serving", "[memory]") {
  auto o = small_runtime();
  o.cpu_memory_limit = 1 << 20;
  am::runtime rt(o);
  auto d = am::devices()[1];
  CHECK(am::get_memory_stats(d).bytes_limit == (1u << 20));
  auto big = am::upload(d, std::vector<std::byte>(2 << 20), {am::dtype::uint8, {2 << 20}});
  CHECK_THROWS_AS(big.get(10s), am::out_of_memory_error);
  CHECK_THROWS_WITH(big.get(10s),
                    "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2097152 bytes on CpuDevice(id=1)");
  // A program whose intermediate does not fit fails the same way; the device keeps working.
  am::value_type t{am::dtype::float32, {100000}};
  am::program_builder b("too_big");
  auto x = b.parameter(t);
  b.output(b.reduce(am::opcode::reduce_sum,
                    b.broadcast_in_dim(x, {4, 100000}, {1}), {0}));
  auto small = am::upload(d, std::vector<std::byte>(400000), t);
  auto out = am::execute(d, b.build(), {small})[0];
  CHECK_THROWS_WITH(out.get(10s), Catch::Contains("RESOURCE_EXHAUSTED") && Catch::Contains("1600000 bytes"));
  auto ok = am::upload(d, std::vector<std::byte>(1000), {am::dtype::uint8, {1000}});
  CHECK(ok.get(10s)->size() == 1000);
}

TEST_CASE("cpu_memory_limit comes from code, flags or AM_CPU_MEMORY_LIMIT", "[memory][options]") {
  std::map<std::string, std::string> vars{{"AM_CPU_MEMORY_LIMIT", "512M"}};
  auto env = [&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  CHECK(am::resolve_options({}, {}, [](const char*) -> const char* { return nullptr; }).cpu_memory_limit == 0);
  CHECK(am::resolve_options({}, {}, env).cpu_memory_limit == 512ull << 20);
  CHECK(am::resolve_options({}, {"--am-cpu-memory-limit=2GiB"}, env).cpu_memory_limit == 2ull << 30);
  CHECK(am::resolve_options({}, {"--am-cpu-memory-limit", "4096"}, env).cpu_memory_limit == 4096);
  am::options code;
  code.cpu_memory_limit = 12345;
  CHECK(am::resolve_options(code, {"--am-cpu-memory-limit=1k"}, env).cpu_memory_limit == 12345);
  CHECK(am::resolve_options({}, {"--am-cpu-memory-limit=64kB"}, env).cpu_memory_limit == 65536);
  vars["AM_CPU_MEMORY_LIMIT"] = "12x";
  CHECK_THROWS_WITH(am::resolve_options({}, {}, env), Catch::Contains("AM_CPU_MEMORY_LIMIT='12x'"));
  CHECK_THROWS_AS(am::resolve_options({}, {"--am-cpu-memory-limit=-1"}, [](const char*) -> const char* { return nullptr; }),
                  am::value_error);
}
