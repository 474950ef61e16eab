// pmap given host data, as JAX takes numpy arrays and Python scalars: a host array that is mapped
// is split one slice per device, one that is not is copied to each, and a scalar is an int32,
// float32 or bool 0-d array; the results equal those of arrays put by hand, and a scalar that is
// mapped is refused with JAX's words.
#include "grad_test_support.hpp"

using namespace am;
using namespace am::testing;
using namespace grad_test;

namespace {

host_array host_y() { return host_array::arange(1.0, 9.0, 1.0, dtype::float64).reshape({4, 2}); }

} // namespace

TEST_CASE("pmap of a host array splits it over the devices like a device_put to them", "[pmap]") {
  runtime rt(eight_cpus());
  auto devs = am::devices(platform::cpu);
  std::vector<device> four(devs.begin(), devs.begin() + 4);
  auto twice = [](const array& a) { return a * 2.0; };
  auto from_host = pmap(twice)(host_y());
  auto from_array = pmap(twice)(device_put(host_y(), four));
  CHECK(values(from_host) == values(from_array));
  CHECK(from_host.dtype() == dtype::float64);
  auto shards = from_host.addressable_shards();
  REQUIRE(shards.size() == 4);
  for (std::size_t i = 0; i < shards.size(); ++i)
    CHECK(shards[i].device.id == four[i].id);
  // Mapped along dim 1: the same as the transposed array along dim 0.
  CHECK(values(pmap(twice, "", {1})(host_y().transpose())) == values(from_array));
  CHECK_THAT(pmap(twice).lowered_text(host_y()), Catch::StartsWith("4 programs in 1 stage(s)"));
}

TEST_CASE("pmap copies an unmapped host array and a scalar to every device, as JAX's in_axes None", "[pmap]") {
  runtime rt(eight_cpus());
  auto mul = [](const array& a, const array& c) { return a * c; };
  auto b = host_array::from_vector(std::vector<double>{10.0, 20.0});
  CHECK(values(pmap(mul, "", {0, am::none})(host_y(), b)) == std::vector<double>{10, 40, 30, 80, 50, 120, 70, 160});
  // Mixed: an array already on the devices and host data beside it.
  auto y = device_put(host_y(), on_4x2(P()));
  CHECK(values(pmap(mul, "", {0, am::none})(y, b)) == std::vector<double>{10, 40, 30, 80, 50, 120, 70, 160});
  // A Python-like scalar: float32 for a double, so a float64 array keeps its dtype.
  auto scaled = pmap(mul, "", {0, am::none})(host_y(), 0.5);
  CHECK(scaled.dtype() == dtype::float64);
  CHECK(values(scaled) == std::vector<double>{0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4});
  auto second = [](const array&, const array& c) { return c; };
  auto as_int = pmap(second, "", {0, am::none}, {am::none})(host_y(), 3);
  CHECK(as_int.dtype() == dtype::int32);
  CHECK(as_int.shape() == shape_t{});
  CHECK(as_int.to_host().item<std::int32_t>() == 3);
  CHECK(pmap(second, "", {0, am::none}, {am::none})(host_y(), 2.5f).dtype() == dtype::float32);
  CHECK(pmap(second, "", {0, am::none}, {am::none})(host_y(), true).dtype() == dtype::bool_);
}

TEST_CASE("pmap refuses a mapped scalar and a host array of the wrong size with JAX's words", "[pmap][errors]") {
  runtime rt(eight_cpus());
  auto mul = [](const array& a, const array& c) { return a * c; };
  CHECK_THROWS_WITH(pmap(mul)(host_y(), 2.0), Catch::Contains("rank should be at least 1, but is only 0"));
  auto devs = am::devices(platform::cpu);
  std::vector<device> two(devs.begin(), devs.begin() + 2);
  auto twice = [](const array& a) { return a * 2.0; };
  CHECK_THROWS_WITH(pmap(twice, "", {0}, {0}, two)(host_y()),
                    Catch::Contains("Leading axis size of input to pmapped function must equal the number of local devices"));
}
