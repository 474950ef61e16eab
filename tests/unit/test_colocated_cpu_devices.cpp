// colocated_cpu_devices: each device's CPU device on the same host, order kept, for device lists and
// meshes, with JAX's errors (made-up accelerator descriptors stand in for GPUs the test machine may lack).
#include <actormesh.hpp>

#include <catch2/catch.hpp>
#include "support/cpu_options.hpp"

namespace {

am::device gpu(int id, int process, int ordinal) { return {id, process, am::platform::cuda, ordinal}; }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const am::value_error& e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

TEST_CASE("colocated_cpu_devices: CPU devices are their own, in the order given", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(4));
  auto devs = am::devices();
  std::vector<am::device> reversed(devs.rbegin(), devs.rend());
  CHECK(am::colocated_cpu_devices(devs) == devs);
  CHECK(am::colocated_cpu_devices(reversed) == reversed);
  CHECK(am::colocated_cpu_devices(std::vector<am::device>{}).empty());
}

TEST_CASE("colocated_cpu_devices: an accelerator gets its process's CPU device of the same ordinal",
          "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(4));
  auto cpu = am::devices();
  auto got = am::colocated_cpu_devices({gpu(7, 0, 2), gpu(5, 0, 0), cpu[1]});
  CHECK(got == std::vector<am::device>{cpu[2], cpu[0], cpu[1]});
}

TEST_CASE("colocated_cpu_devices: JAX's errors", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  CHECK(error_of([] { am::colocated_cpu_devices({gpu(9, 3, 0)}); }) == "Device CudaDevice(id=9) has no colocated devices");
  CHECK(error_of([] { am::colocated_cpu_devices({gpu(9, 0, 2)}); })
        == "Process 0 does not have enough local CPU devices");
}

TEST_CASE("colocated_cpu_devices: a mesh becomes the CPU mesh of the same shape and names", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(4));
  auto cpu = am::devices();
  am::mesh accel(am::device_grid({2, 2}, {gpu(10, 0, 3), gpu(11, 0, 2), gpu(12, 0, 1), gpu(13, 0, 0)}), {"x", "y"});
  auto m = am::colocated_cpu_devices(accel);
  CHECK(m.axis_names() == std::vector<std::string>{"x", "y"});
  CHECK(m.axis_sizes() == std::vector<std::int64_t>{2, 2});
  CHECK(m.flat_devices() == std::vector<am::device>{cpu[3], cpu[2], cpu[1], cpu[0]});
  am::mesh plain({4}, cpu, {"x"});
  CHECK(am::colocated_cpu_devices(plain) == plain);
}
