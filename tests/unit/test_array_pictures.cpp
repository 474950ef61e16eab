// The seed's pictures drawn from real arrays: visualize_array_sharding(array) on 8 CPU devices, with
// the labels relabelled to the seed's TPU v3-8 (platform TPU, device order 0,1,2,3,6,7,4,5). The
// arrays are 16x16 (the pictures depend only on the ratio of the dimensions, so they equal the seed's
// 8192x8192 ones). Each picture ends with the empty line REFERENCE.md specifies; the pictures
// test_visualize.cpp checks too live in support/seed_pictures.hpp.
#include "actormesh/devices/runtime.hpp"
#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/ops.hpp"
#include "actormesh/sharding/positional_sharding.hpp"
#include "actormesh/sharding/single_device_sharding.hpp"
#include "actormesh/sharding/visualize.hpp"

#include "support/arrays.hpp"
#include "support/seed_pictures.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

using am::testing::eight_cpus;
using am::testing::pictures::as_drawn;
namespace pictures = am::testing::pictures;

/// The seed's labels: TPU, devices in the torus order of mesh_utils.create_device_mesh((8,)).
am::visualize_options tpu() {
  return am::visualize_options{.platform = "TPU", .device_ids = {0, 1, 2, 3, 6, 7, 4, 5}};
}

/// The test array: 16x16 float32 values on device 0, like the seed's x before any device_put.
am::array make_x(const std::vector<am::device>& d) {
  return am::device_put(am::host_array::arange(0, 256, 1, am::dtype::float32).reshape({16, 16}), d[0]);
}

const std::string grid_4x2_cpu = as_drawn(R"PIC(┌──────────┬──────────┐
│  CPU 0   │  CPU 1   │
├──────────┼──────────┤
│  CPU 2   │  CPU 3   │
├──────────┼──────────┤
│  CPU 4   │  CPU 5   │
├──────────┼──────────┤
│  CPU 6   │  CPU 7   │
└──────────┴──────────┘
)PIC");

} // namespace

TEST_CASE("pictures: x on one device, then the quick example y = device_put(x, sharding.reshape(4, 2))",
          "[array][pictures]") {
  am::runtime rt(eight_cpus());
  const auto d = am::devices(am::platform::cpu);
  const auto x = make_x(d);
  CHECK(am::visualize_array_sharding(x, tpu()) == pictures::single_tpu_0);
  const am::positional_sharding sharding(am::create_device_mesh({8}, d));
  const auto y = am::device_put(x, am::share(sharding.reshape({4, 2})));
  CHECK(am::visualize_array_sharding(y, tpu()) == pictures::grid_4x2_tpu);
  CHECK(am::visualize_array_sharding(y) == grid_4x2_cpu);
  // z = sin(y): computation follows the sharding, and so does the picture.
  const auto z = am::sin(y);
  CHECK(am::visualize_array_sharding(z, tpu()) == pictures::grid_4x2_tpu);
  CHECK(am::visualize_array_sharding(z) == grid_4x2_cpu);
}

TEST_CASE("pictures: PositionalSharding reshape(8, 1), reshape(1, 8), replicate(0), replicate(1)",
          "[array][pictures]") {
  am::runtime rt(eight_cpus());
  const auto d = am::devices(am::platform::cpu);
  const auto x = make_x(d);
  const am::positional_sharding sharding(am::create_device_mesh({8}, d));
  CHECK(am::visualize_array_sharding(am::device_put(x, am::share(sharding.reshape({8, 1}))), tpu()) ==
        pictures::rows_8_tpu);
  CHECK(am::visualize_array_sharding(am::device_put(x, am::share(sharding.reshape({1, 8}))), tpu()) ==
        pictures::cols_8_tpu);
  const auto s42 = sharding.reshape({4, 2});
  CHECK(am::visualize_array_sharding(am::device_put(x, am::share(s42.replicate(0, true))), tpu()) ==
        pictures::cols_2_tpu);
  CHECK(am::visualize_array_sharding(am::device_put(x, am::share(s42.replicate(1))), tpu()) ==
        pictures::rows_4_pairs_tpu);
}

TEST_CASE("pictures: NamedSharding on mesh (4, 2) ('a', 'b')", "[array][pictures]") {
  am::runtime rt(eight_cpus());
  const auto d = am::devices(am::platform::cpu);
  const auto x = make_x(d);
  const am::mesh mesh(am::create_device_mesh({4, 2}, d), {"a", "b"});
  const auto draw = [&](const am::partition_spec& spec) {
    return am::visualize_array_sharding(am::device_put(x, am::make_named_sharding(mesh, spec)), tpu());
  };
  CHECK(draw(am::P("a", "b")) == pictures::grid_4x2_tpu);
  CHECK(draw(am::P("b", "a")) == pictures::grid_2x4_tpu);
  CHECK(draw(am::P("a", am::none)) == pictures::rows_4_pairs_tpu);
  CHECK(draw(am::P("a")) == pictures::rows_4_pairs_tpu);
  CHECK(draw(am::P(am::none, "b")) == pictures::cols_2_tpu);
  CHECK(draw(am::P(am::none, "a")) == pictures::cols_4_pairs_tpu);
  CHECK(draw(am::P(am::spec_entry{"a", "b"}, am::none)) == pictures::rows_8_tpu);
  CHECK(draw(am::P()) == as_drawn(R"PIC(┌───────────────────────┐
│                       │
│                       │
│                       │
│                       │
│  TPU 0,1,2,3,4,5,6,7  │
│                       │
│                       │
│                       │
│                       │
└───────────────────────┘
)PIC"));
}

TEST_CASE("pictures: a 1-D array and the rank error", "[array][pictures]") {
  am::runtime rt(eight_cpus());
  const auto d = am::devices(am::platform::cpu);
  const am::mesh m8({8}, d, {"x"});
  const auto v = am::device_put(am::host_array::arange(8, am::dtype::int32), am::make_named_sharding(m8, am::P("x")));
  CHECK(am::visualize_array_sharding(v) == pictures::row_8_cpu_1d);
  const auto cube = am::device_put(am::host_array::zeros({8, 2, 2}, am::dtype::float32), am::make_named_sharding(m8, am::P("x")));
  CHECK_THROWS_MATCHES(am::visualize_array_sharding(cube), am::value_error,
                       Catch::Matchers::Message("`visualize_sharding` only works for shapes with 1 and 2 dimensions."));
}
