// Inside a colocated body or method, am::colocated_devices() gives the devices of the call (its
// inputs' list, or specialize's devices), and the first of them is the default device, so a
// function without inputs puts its outputs where it was specialized to run without naming a
// device (am::device_put(h)); outside a body the default device is this process's first and
// colocated_devices() is refused.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include "support/cpu_options.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

/// The ids of `devices`, in order.
std::vector<int> ids(const std::vector<am::device>& devices) {
  std::vector<int> out;
  for (auto& d : devices)
    out.push_back(d.id);
  return out;
}

const auto make_zeros = am::colocated_python("test.call_devices.make_zeros", [] {
  return am::device_put(am::host_array::zeros({4}, am::dtype::float32)); // no device named
});

/// The call's device ids followed by the default device's id, replicated over the call's devices
/// (a colocated call's outputs use the same devices as its inputs).
am::array call_devices_then_default() {
  auto devices = am::colocated_devices();
  auto seen = ids(devices);
  seen.push_back(am::default_device().id);
  am::mesh everywhere({static_cast<std::int64_t>(devices.size())}, devices, {"x"});
  return am::device_put(am::host_array::from_vector(seen), am::make_named_sharding(everywhere, am::P()));
}

const auto device_ids = am::colocated_python("test.call_devices.device_ids", [](const am::array& x) {
  return std::vector<am::array>{x, call_devices_then_default()};
});

struct where_am_i {
  am::array ids_of_call(const am::array& x) {
    (void)x;
    return call_devices_then_default();
  }
};

const auto where_class = am::colocated_python_class<where_am_i>("test.call_devices.where_am_i")
                           .def("ids_of_call", &where_am_i::ids_of_call);

} // namespace

TEST_CASE("a colocated function without inputs puts its outputs on the devices it was specialized with",
          "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(3));
  auto cpus = am::colocated_cpu_devices(am::devices());
  CHECK(am::default_device().id == am::local_devices().front().id);
  CHECK_THROWS_WITH(am::colocated_devices(), "colocated_devices: called outside a colocated function or method");
  for (int d : {1, 2}) {
    auto zeros = make_zeros.specialize({.devices = std::vector{cpus[static_cast<std::size_t>(d)]}})();
    CHECK(zeros.addressable_shards().at(0).device.id == cpus[static_cast<std::size_t>(d)].id);
    CHECK(zeros.to_host().to_vector<float>() == std::vector<float>{0, 0, 0, 0});
  }
  CHECK(am::default_device().id == am::local_devices().front().id); // the body's default ended with it
}

TEST_CASE("colocated_devices() inside a function and a method is the call's device list", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(3));
  auto cpus = am::colocated_cpu_devices(am::devices());
  am::mesh m({2}, {cpus[2], cpus[1]}, {"x"});
  auto x = am::device_put(am::host_array::from_vector(std::vector<int>{1, 2}), am::make_named_sharding(m, am::P("x")));
  auto out = device_ids(x);
  // The call's devices in the inputs' order, and the first of them is the default device.
  const std::vector<int> expected{cpus[2].id, cpus[1].id, cpus[2].id};
  CHECK(out[1].to_host().to_vector<int>() == expected);
  auto object = where_class();
  auto seen = object.call(&where_am_i::ids_of_call, x);
  CHECK(seen.to_host().to_vector<int>() == expected);
}
