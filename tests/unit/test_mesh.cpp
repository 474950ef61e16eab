// Mesh and device grids: shape, names, devices, and JAX's errors.
#include "actormesh/sharding/mesh.hpp"

#include "actormesh/actors/errors.hpp"

#include <catch2/catch.hpp>

using namespace am;
using Catch::Matchers::Message;
using shape_t = std::vector<std::int64_t>;

TEST_CASE("mesh: a 4x2 mesh: shape, axis sizes by name, flat devices", "[mesh]") {
  const auto devices = virtual_cpu_devices(8);
  mesh m(create_device_mesh({4, 2}, devices), {"x", "y"});
  CHECK(m.axis_sizes() == shape_t{4, 2});
  CHECK(m.axis_names() == std::vector<std::string>{"x", "y"});
  CHECK(m.ndim() == 2);
  CHECK(m.size() == 8);
  CHECK(m.axis_size("x") == 4);
  CHECK(m.axis_size("y") == 2);
  CHECK(m.axis_index("y") == std::optional<std::size_t>{1});
  CHECK_FALSE(m.axis_index("z").has_value());
  CHECK(m.flat_devices() == devices);
  CHECK(m.devices().at({2, 1}).id == 5);
  CHECK(m.to_string() == "Mesh('x': 4, 'y': 2)");
  CHECK(m.axis_names_repr() == "('x', 'y')");
  CHECK(m.is_fully_addressable(0));
  CHECK_FALSE(m.is_fully_addressable(1));
  CHECK_THROWS_MATCHES(m.axis_size("z"), value_error,
                       Message("Resource axis: z is not found in mesh: ('x', 'y')."));
}

TEST_CASE("mesh: create_device_mesh keeps plain order and checks the count", "[mesh]") {
  const auto devices = virtual_cpu_devices(8);
  auto grid = create_device_mesh({8}, devices);
  CHECK(grid.shape() == shape_t{8});
  CHECK(grid.devices() == devices);
  CHECK_THROWS_MATCHES(create_device_mesh({4, 2}, virtual_cpu_devices(6)), value_error,
                       Message("Number of devices 6 must equal the product of mesh_shape (4, 2)"));
  CHECK_THROWS_MATCHES(create_device_mesh({3}, virtual_cpu_devices(8)), value_error,
                       Message("Number of devices 8 must equal the product of mesh_shape (3,)"));
}

TEST_CASE("mesh: the grid rank must equal the number of names", "[mesh]") {
  CHECK_THROWS_MATCHES(mesh(device_grid({4, 2}, virtual_cpu_devices(8)), {"x"}), value_error,
                       Message("Mesh requires the ndim of its first argument (`devices`) to equal the length "
                               "of its second argument (`axis_names`), but got devices.ndim == 2 and "
                               "len(axis_names) == 1."));
}

TEST_CASE("mesh: axis names are unique and non-empty", "[mesh]") {
  CHECK_THROWS_MATCHES(mesh({4, 2}, virtual_cpu_devices(8), {"x", "x"}), value_error,
                       Message("Mesh axis names must be unique, but got ('x', 'x') where 'x' appears more "
                               "than once."));
  CHECK_THROWS_MATCHES(mesh({4, 2}, virtual_cpu_devices(8), {"x", ""}), value_error,
                       Message("Mesh axis names must be non-empty strings, but got ('x', '')."));
}

TEST_CASE("mesh: a device appears once (two blocks cannot share its shard)", "[mesh]") {
  auto devs = virtual_cpu_devices(8);
  CHECK_THROWS_MATCHES(mesh(device_grid({4}, {devs[0], devs[1], devs[2], devs[1]}), {"x"}), value_error,
                       Message("Mesh devices must be unique, but got CpuDevice(id=1) at positions 1 and 3."));
}

TEST_CASE("mesh: device grids reshape like numpy", "[mesh]") {
  device_grid g(virtual_cpu_devices(8));
  CHECK(g.reshape({4, 2}).shape() == shape_t{4, 2});
  CHECK(g.reshape({-1, 2}).shape() == shape_t{4, 2});
  CHECK(g.reshape({2, 2, 2}).at({1, 0, 1}).id == 5);
  CHECK_THROWS_MATCHES(g.reshape({3, 2}), value_error, Message("cannot reshape array of size 8 into shape (3,2)"));
  CHECK_THROWS_MATCHES(g.reshape({-1, -1}), value_error, Message("can only specify one unknown dimension"));
  CHECK_THROWS_AS(g.reshape({-1, 3}), value_error);
  CHECK_THROWS_AS(g.at({8}), value_error);
  CHECK(mesh({2, 4}, virtual_cpu_devices(8), {"a", "b"}) == mesh({2, 4}, virtual_cpu_devices(8), {"a", "b"}));
  CHECK_FALSE(mesh({2, 4}, virtual_cpu_devices(8), {"a", "b"}) == mesh({4, 2}, virtual_cpu_devices(8), {"a", "b"}));
}

TEST_CASE("mesh: mesh shapes on the command line", "[mesh]") {
  CHECK(parse_mesh_shape("4x2") == shape_t{4, 2});
  CHECK(parse_mesh_shape("8") == shape_t{8});
  CHECK(parse_mesh_shape("2x2x2") == shape_t{2, 2, 2});
  for (const char* bad : {"", "4x", "x2", "4x0", "4*2", "-4", "4x2x"})
    CHECK_THROWS_AS(parse_mesh_shape(bad), value_error);
}

TEST_CASE("mesh: virtual CPU devices", "[mesh]") {
  const auto d = virtual_cpu_devices(3);
  REQUIRE(d.size() == 3);
  CHECK(d[2].id == 2);
  CHECK(d[2].platform == platform::cpu);
  CHECK(d[2].process_index == 0);
  CHECK(to_string(d[1]) == "CpuDevice(id=1)");
}
