// What an array does after its runtime stopped (doc/runtime.md, "Stopping"): computed data stays
// with the array and a later runtime with the same devices can use it; a device the later runtime
// does not have is refused by the descriptor check. (Checked under ASan: no use after free of the
// stopped runtime's buffer pools.)
#include "support/arrays.hpp"

#include <catch2/catch.hpp>
#include "support/cpu_options.hpp"

TEST_CASE("array_after_stop: computed arrays outlive their runtime", "[array_after_stop]") {
  am::array x;
  {
    am::runtime rt(am::test::cpu_options(4));
    x = am::device_put(am::host_array::arange(8, am::dtype::float32), am::devices()[3]);
    x.block_until_ready();
  }
  {
    am::runtime rt(am::test::cpu_options(4));
    CHECK(am::testing::values(x) == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(am::testing::values(x + 1.0) == std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8});
  }
  am::runtime rt(am::test::cpu_options(2));
  CHECK_THROWS_AS(am::sin(x), am::value_error); // CpuDevice(id=3) is not a device of this runtime
}

TEST_CASE("array_after_stop: with no runtime running, reading an array says so", "[array_after_stop]") {
  // What is addressable, and the device that copies a shard out (CUDA memory, a worker's shard),
  // belong to a running runtime: between runtimes these raise the runtime's own error, and the
  // array's data is there again for the next runtime (the case above).
  am::array x;
  {
    am::runtime rt(am::test::cpu_options(2));
    x = am::device_put(am::host_array::arange(4, am::dtype::float32), am::devices()[1]);
    x.block_until_ready();
  }
  CHECK_THROWS_WITH(x.to_host(), Catch::Contains("The actormesh runtime is not running"));
  CHECK_THROWS_WITH(x.addressable_shards(), Catch::Contains("The actormesh runtime is not running"));
  CHECK_THROWS_WITH(x.is_fully_addressable(), Catch::Contains("The actormesh runtime is not running"));
  CHECK(x.shape() == am::shape_t{4}); // what the array is needs no runtime
  am::runtime rt(am::test::cpu_options(2));
  CHECK(am::testing::values(x) == std::vector<double>{0, 1, 2, 3});
}
