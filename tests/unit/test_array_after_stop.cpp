// What an array does after its runtime stopped (doc/runtime.md, "Stopping"): computed data stays
// with the array and a later runtime with the same devices can use it; a device the later runtime
// does not have is refused by the descriptor check. (Checked under ASan: no use after free of the
// stopped runtime's buffer pools.)
#include "support/arrays.hpp"

#include <catch2/catch.hpp>

namespace {

am::options cpus(int n) {
  am::options o;
  o.cpu_devices = n;
  o.use_gpus = false;
  return o;
}

} // namespace

TEST_CASE("array_after_stop: computed arrays outlive their runtime", "[array_after_stop]") {
  am::array x;
  {
    am::runtime rt(cpus(4));
    x = am::device_put(am::host_array::arange(8, am::dtype::float32), am::devices()[3]);
    x.block_until_ready();
  }
  {
    am::runtime rt(cpus(4));
    CHECK(am::testing::values(x) == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(am::testing::values(x + 1.0) == std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8});
  }
  am::runtime rt(cpus(2));
  CHECK_THROWS_AS(am::sin(x), am::value_error); // CpuDevice(id=3) is not a device of this runtime
}
