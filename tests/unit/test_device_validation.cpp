// Device descriptors are checked against the runtime's devices: a descriptor
// whose platform, process or ordinal differs from the runtime's device of that id, or whose id the
// runtime does not have, is refused with am::value_error before any array refers to it.
#include "support/arrays.hpp"

#include <catch2/catch.hpp>

namespace {

am::host_array small() {
  return am::host_array::arange(8, am::dtype::float32);
}

} // namespace

TEST_CASE("device_validation: made-up descriptors are refused", "[device_validation]") {
  am::runtime rt(am::testing::eight_cpus());
  auto real = am::devices()[3];

  SECTION("a CUDA device carrying a CPU device's id") {
    am::device fake = real;
    fake.platform = am::platform::cuda;
    CHECK_THROWS_WITH(am::device_put(small(), fake),
                      "Unknown device CudaDevice(id=3) of process 0 (local ordinal 3): this runtime's "
                      "device 3 is CpuDevice(id=3) of process 0 (local ordinal 3)");
  }
  SECTION("a device of another process in a one-process runtime") {
    am::device fake = real;
    fake.process_index = 3;
    CHECK_THROWS_AS(am::device_put(small(), fake), am::value_error);
  }
  SECTION("a wrong local ordinal") {
    am::device fake = real;
    fake.local_ordinal = 5;
    CHECK_THROWS_AS(am::device_put(small(), fake), am::value_error);
  }
  SECTION("an id the runtime does not have") {
    am::device fake = real;
    fake.id = 99;
    CHECK_THROWS_WITH(am::device_put(small(), fake),
                      "Unknown device CpuDevice(id=99) of process 0 (local ordinal 3): this runtime has "
                      "devices with ids 0 to 7");
    fake.id = -1;
    CHECK_THROWS_AS(am::device_put(small(), fake), am::value_error);
  }
  SECTION("a mesh of made-up devices cannot place data") {
    auto devs = am::devices();
    devs[5].process_index = 1;
    am::mesh m(am::create_device_mesh({4, 2}, devs), {"x", "y"});
    CHECK_THROWS_AS(am::device_put(am::host_array::zeros({8, 2}, am::dtype::float32),
                                   am::make_named_sharding(m, am::P("x", "y"))),
                    am::value_error);
  }
  SECTION("real descriptors still work, and the array reports them") {
    auto x = am::device_put(small(), real);
    REQUIRE(x.addressable_shards().size() == 1);
    CHECK(x.addressable_shards()[0].device == real);
    CHECK(am::testing::values(x) == am::testing::values(small()));
  }
}

TEST_CASE("device_validation: descriptors from a stopped runtime are refused by the next", "[device_validation]") {
  am::device old_cuda;
  {
    am::runtime rt(am::testing::eight_cpus());
    old_cuda = am::devices()[0];
  }
  am::options four;
  four.cpu_devices = 4;
  four.use_gpus = false;
  am::runtime rt(four);
  old_cuda.id = 6; // valid in the old 8-device runtime, unknown in this one
  CHECK_THROWS_AS(am::device_put(small(), old_cuda), am::value_error);
}
