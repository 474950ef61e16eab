// Starting the runtime, device discovery, the JAX-like device queries and the no-GPU fallback.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <chrono>

TEST_CASE("device descriptors print like JAX's", "[devices]") {
  CHECK(am::to_string(am::device{0, 0, am::platform::cpu, 0}) == "CpuDevice(id=0)");
  CHECK(am::to_string(am::device{8, 0, am::platform::cuda, 0}) == "CudaDevice(id=8)");
  CHECK(am::parse_platform("GPU") == am::platform::cuda);
  CHECK_THROWS_AS(am::parse_platform("tpu"), am::value_error);
}

TEST_CASE("queries before the runtime starts raise a clear error", "[runtime]") {
  REQUIRE_FALSE(am::is_running());
  CHECK_THROWS_WITH(am::devices(), Catch::Contains("runtime is not running"));
}

TEST_CASE("the runtime finds the configured number of CPU devices", "[runtime]") {
  am::options opts;
  opts.cpu_devices = 5;
  opts.use_gpus = false;
  am::runtime rt(opts);
  REQUIRE(am::is_running());
  auto cpus = am::devices(am::platform::cpu);
  REQUIRE(cpus.size() == 5);
  for (int i = 0; i < 5; ++i) {
    CHECK(cpus[static_cast<std::size_t>(i)].id == i);
    CHECK(cpus[static_cast<std::size_t>(i)].local_ordinal == i);
    CHECK(cpus[static_cast<std::size_t>(i)].process_index == 0);
  }
  CHECK(am::default_platform() == am::platform::cpu);
  CHECK(am::devices() == cpus);
  CHECK(am::local_devices() == cpus);
  CHECK(am::device_count() == 5);
  CHECK(am::local_device_count() == 5);
  CHECK(am::process_index() == 0);
  CHECK(am::process_count() == 1);
  CHECK(am::device_by_id(3) == cpus[3]);
  CHECK_THROWS_AS(am::device_by_id(5), am::value_error);
  CHECK_FALSE(rt.gpus().reason.empty());
  CHECK_THROWS_WITH(am::devices(am::platform::cuda), Catch::Contains("Backend 'cuda' failed to initialize"));
}

TEST_CASE("a second runtime cannot start while one runs, one can start after", "[runtime]") {
  {
    am::runtime rt;
    CHECK_THROWS_AS(am::runtime(), am::runtime_error);
    CHECK(am::device_count() >= 1);
  }
  CHECK_FALSE(am::is_running());
  am::options opts;
  opts.cpu_devices = 2;
  am::runtime again(opts);
  CHECK(am::devices(am::platform::cpu).size() == 2);
}

TEST_CASE("without a usable GPU the runtime falls back to CPU devices and says why", "[runtime]") {
  am::runtime rt;
  if (rt.gpus().count > 0) {
    CHECK(am::default_platform() == am::platform::cuda);
    return;
  }
  CHECK(am::default_platform() == am::platform::cpu);
  CHECK(am::devices().front().platform == am::platform::cpu);
  INFO(rt.gpus().reason);
  CHECK_FALSE(rt.gpus().reason.empty());
}

TEST_CASE("command-line flags reach the runtime", "[runtime]") {
  const char* argv[] = {"prog", "--am-cpu-devices=3", "--am-gpus", "off"};
  am::runtime rt(4, argv);
  CHECK(rt.config().cpu_devices == 3);
  CHECK_FALSE(rt.config().use_gpus);
  CHECK(am::devices().size() == 3);
  CHECK_THAT(rt.gpus().reason, Catch::Contains("disabled"));
}

TEST_CASE("stop() from inside a host task is refused instead of waiting for itself", "[runtime]") {
  am::options opts;
  opts.cpu_devices = 2;
  opts.use_gpus = false;
  am::runtime rt(opts);
  auto refused = am::host_call([&rt] { rt.stop(); });
  CHECK_THROWS_WITH(refused.get(std::chrono::seconds(30)),
                    Catch::Contains("cannot stop from inside one of its own host tasks"));
  CHECK(am::is_running());
  rt.stop(); // from a user thread it works
  CHECK_FALSE(am::is_running());
}
