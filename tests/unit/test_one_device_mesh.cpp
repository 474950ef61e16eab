// A one-device mesh makes every sharding fully replicated, yet P('x') is still not valid for a
// scalar: reductions and rank-lowering reshapes must derive their result's sharding (found by
// running the stress tests at AM_CPU_DEVICES=1: sum over P('x') raised a rank error).
#include "support/arrays.hpp"

#include <catch2/catch.hpp>

TEST_CASE("one_device_mesh: reductions and reshapes of P('x') arrays", "[one_device_mesh]") {
  am::options one;
  one.cpu_devices = 1;
  one.use_gpus = false;
  am::runtime rt(one);
  am::mesh m(am::create_device_mesh({1}, am::devices()), {"x"});
  auto x = am::device_put(am::host_array::arange(16, am::dtype::float32).reshape({4, 4}),
                          am::make_named_sharding(m, am::P("x")));
  auto total = am::sum(x);
  CHECK(total.sharding()->to_string() == "NamedSharding(mesh=Mesh('x': 1), spec=P())");
  CHECK(am::testing::values(total) == std::vector<double>{120.0});
  CHECK(am::testing::values(am::sum(x, {0, 1})) == std::vector<double>{120.0});
  CHECK(am::testing::values(am::sum(x, {1})) == std::vector<double>{6.0, 22.0, 38.0, 54.0});
  auto flat = am::reshape(x, {16});
  CHECK(am::testing::values(flat).size() == 16);
  auto y = am::device_put(am::host_array::arange(16, am::dtype::float32).reshape({4, 4}),
                          am::make_named_sharding(m, am::P(am::none, "x")));
  CHECK(am::testing::values(am::sum(y, {1})) == std::vector<double>{6.0, 22.0, 38.0, 54.0});
  CHECK(am::testing::values(am::reshape(y, {16}))[15] == 15.0);
}
