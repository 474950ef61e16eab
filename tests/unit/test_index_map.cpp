// Index maths of NamedSharding for every spec of seed 001, on meshes (4, 2) and (8,), and every
// error with JAX's exact wording.
#include "actormesh/sharding/index_map.hpp"
#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/sharding_errors.hpp"
#include "actormesh/sharding/single_device_sharding.hpp"

#include <catch2/catch.hpp>

using namespace am;
using Catch::Matchers::Message;
using names = std::vector<std::string>;
using shape_t = std::vector<std::int64_t>;

namespace {

mesh mesh_4x2() { return mesh({4, 2}, virtual_cpu_devices(8), {"a", "b"}); }
mesh mesh_8() { return mesh({8}, virtual_cpu_devices(8), {"x"}); }

// Expected placement of device d: rows [r0, r1), cols [c0, c1), replica id.
struct expect {
  std::int64_t r0, r1, c0, c1;
  int replica;
};

template <class F>
void check_placements(const sharding& s, const shape_t& shape, F expected_for) {
  const auto placements = s.shard_placements(shape);
  REQUIRE(placements.size() == 8);
  for (int d = 0; d < 8; ++d) {
    const auto& p = placements[static_cast<std::size_t>(d)];
    const expect e = expected_for(d);
    INFO("device " << d << " holds " << to_string(p.index) << " replica " << p.replica_id);
    CHECK(p.device.id == d);
    CHECK(p.index == shard_index{{e.r0, e.r1}, {e.c0, e.c1}});
    CHECK(p.replica_id == e.replica);
    CHECK(s.replica_id(p.device, shape) == e.replica);
  }
}

} // namespace

TEST_CASE("index_map: P('a', 'b') on mesh (4, 2): 2x2 blocks, row-major", "[index_map]") {
  named_sharding s(mesh_4x2(), P("a", "b"));
  CHECK(s.shard_shape({8, 4}) == shape_t{2, 2});
  check_placements(s, {8, 4}, [](int d) { return expect{2 * (d / 2), 2 * (d / 2) + 2, 2 * (d % 2), 2 * (d % 2) + 2, 0}; });
  CHECK_FALSE(s.is_fully_replicated());
}

TEST_CASE("index_map: P('b', 'a') on mesh (4, 2): rows by b, columns by a", "[index_map]") {
  named_sharding s(mesh_4x2(), P("b", "a"));
  CHECK(s.shard_shape({8, 4}) == shape_t{4, 1});
  check_placements(s, {8, 4}, [](int d) { return expect{4 * (d % 2), 4 * (d % 2) + 4, d / 2, d / 2 + 1, 0}; });
}

TEST_CASE("index_map: P('a', None) and P('a') on mesh (4, 2): replicated over b", "[index_map]") {
  for (const auto& spec : {P("a", none), P("a")}) {
    named_sharding s(mesh_4x2(), spec);
    CHECK(s.shard_shape({8, 4}) == shape_t{2, 4});
    check_placements(s, {8, 4}, [](int d) { return expect{2 * (d / 2), 2 * (d / 2) + 2, 0, 4, d % 2}; });
  }
}

TEST_CASE("index_map: P(None, 'b') on mesh (4, 2): columns by b, replicated over a", "[index_map]") {
  named_sharding s(mesh_4x2(), P(none, "b"));
  CHECK(s.shard_shape({8, 4}) == shape_t{8, 2});
  check_placements(s, {8, 4}, [](int d) { return expect{0, 8, 2 * (d % 2), 2 * (d % 2) + 2, d / 2}; });
}

TEST_CASE("index_map: P(None, 'a') on mesh (4, 2): columns by a, replicated over b", "[index_map]") {
  named_sharding s(mesh_4x2(), P(none, "a"));
  CHECK(s.shard_shape({8, 4}) == shape_t{8, 1});
  check_placements(s, {8, 4}, [](int d) { return expect{0, 8, d / 2, d / 2 + 1, d % 2}; });
}

TEST_CASE("index_map: P(('a', 'b'), None) on mesh (4, 2): one axis over both mesh axes, a major", "[index_map]") {
  named_sharding s(mesh_4x2(), P(names{"a", "b"}, none));
  CHECK(s.shard_shape({8, 4}) == shape_t{1, 4});
  check_placements(s, {8, 4}, [](int d) { return expect{d, d + 1, 0, 4, 0}; });
  // b major instead: row = b * 4 + a.
  named_sharding t(mesh_4x2(), P(names{"b", "a"}));
  check_placements(t, {8, 4}, [](int d) {
    const int row = (d % 2) * 4 + d / 2;
    return expect{row, row + 1, 0, 4, 0};
  });
}

TEST_CASE("index_map: P() on mesh (4, 2): fully replicated, replica id = mesh position", "[index_map]") {
  named_sharding s(mesh_4x2(), P());
  CHECK(s.is_fully_replicated());
  CHECK(s.shard_shape({8, 4}) == shape_t{8, 4});
  check_placements(s, {8, 4}, [](int d) { return expect{0, 8, 0, 4, d}; });
}

TEST_CASE("index_map: specs on mesh (8,)", "[index_map]") {
  named_sharding rows(mesh_8(), P("x"));
  CHECK(rows.shard_shape({8, 4}) == shape_t{1, 4});
  check_placements(rows, {8, 4}, [](int d) { return expect{d, d + 1, 0, 4, 0}; });
  named_sharding cols(mesh_8(), P(none, "x"));
  check_placements(cols, {8, 16}, [](int d) { return expect{0, 8, 2 * d, 2 * d + 2, 0}; });
  named_sharding all(mesh_8(), P());
  check_placements(all, {8, 4}, [](int d) { return expect{0, 8, 0, 4, d}; });
  // 1-D arrays and extra trailing dimensions.
  const auto one_d = rows.devices_indices_map({16});
  CHECK(one_d[3].second == shard_index{{6, 8}});
  const auto three_d = rows.devices_indices_map({8, 2, 3});
  CHECK(three_d[5].second == shard_index{{5, 6}, {0, 2}, {0, 3}});
}

TEST_CASE("index_map: device order follows the mesh, not the ids", "[index_map]") {
  auto d = virtual_cpu_devices(8);
  std::vector<device> order;
  for (int i : {0, 1, 2, 3, 6, 7, 4, 5})
    order.push_back(d[static_cast<std::size_t>(i)]);
  named_sharding s(mesh(create_device_mesh({4, 2}, order), {"a", "b"}), P("a", "b"));
  const auto map = s.devices_indices_map({8, 2});
  // Listed by device id; device 6 sits at mesh row 2.
  REQUIRE(map.size() == 8);
  CHECK(map[6].first.id == 6);
  CHECK(map[6].second == shard_index{{4, 6}, {0, 1}});
  CHECK(map[4].second == shard_index{{6, 8}, {0, 1}});
  CHECK(s.device_assignment()[4].id == 6);
  CHECK(s.device_set() == d);
}

TEST_CASE("index_map: mesh axes of size 1 change nothing", "[index_map]") {
  named_sharding plain(mesh_4x2(), P("a", "b"));
  named_sharding padded(mesh({4, 1, 2}, virtual_cpu_devices(8), {"a", "c", "b"}), P(names{"a", "c"}, "b"));
  CHECK(padded.shard_placements({8, 4}) == plain.shard_placements({8, 4}));
  CHECK(padded.is_equivalent_to(plain, 2));
  named_sharding unit(mesh({1, 8}, virtual_cpu_devices(8), {"u", "x"}), P("u"));
  CHECK(unit.is_fully_replicated());
}

TEST_CASE("index_map: the tile layout and replica ids as plain functions", "[index_map]") {
  const auto m = mesh_4x2();
  const auto layout = named_tile_layout(m, P(none, "a"), 3);
  CHECK(layout.partitions == shape_t{1, 4, 1});
  REQUIRE(layout.tile_of.size() == 8);
  CHECK(layout.tile_of[5] == shape_t{0, 2, 0});
  const auto indices = tile_indices(layout, {2, 8, 3}, "S");
  CHECK(indices[5] == shard_index{{0, 2}, {4, 6}, {0, 3}});
  CHECK(replica_ids(indices) == std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1});
  CHECK(to_string(indices[5]) == "[0:2, 4:6, 0:3]");
  CHECK(tiled_shard_shape({8, 4}, {4, 2}, "S") == shape_t{2, 2});
  CHECK_NOTHROW(check_spec_for_mesh(P("a", "b"), m));
  CHECK_NOTHROW(check_spec_rank(P("a", "b"), 2, "S"));
}

TEST_CASE("index_map: DuplicateSpecError: a mesh axis used twice", "[index_map][errors]") {
  mesh m({4, 2}, virtual_cpu_devices(8), {"x", "y"});
  CHECK_THROWS_MATCHES(named_sharding(m, P("x", "x")), duplicate_spec_error,
                       Message("A single NamedSharding spec specification can map every mesh axis to at most one "
                               "positional dimension, but P('x', 'x') has duplicate entries for `x`"));
  CHECK_THROWS_MATCHES(named_sharding(m, P(names{"y", "x"}, "x", "y")), duplicate_spec_error,
                       Message("A single NamedSharding spec specification can map every mesh axis to at most one "
                               "positional dimension, but P(('y', 'x'), 'x', 'y') has duplicate entries for `x`, "
                               "`y`"));
  // It is a value_error too.
  CHECK_THROWS_AS(named_sharding(m, P(names{"x", "x"})), value_error);
}

TEST_CASE("index_map: an axis the mesh does not have", "[index_map][errors]") {
  mesh m({4, 2}, virtual_cpu_devices(8), {"x", "y"});
  CHECK_THROWS_MATCHES(named_sharding(m, P("z")), value_error,
                       Message("Resource axis: z of P('z',) is not found in mesh: ('x', 'y')."));
  CHECK_THROWS_MATCHES(named_sharding(mesh_8(), P(none, names{"x", "w"})), value_error,
                       Message("Resource axis: w of P(None, ('x', 'w')) is not found in mesh: ('x',)."));
}

TEST_CASE("index_map: a spec longer than the rank", "[index_map][errors]") {
  mesh m({4, 2}, virtual_cpu_devices(8), {"x", "y"});
  named_sharding s(m, P("x", "y"));
  const std::string repr = "NamedSharding(mesh=Mesh('x': 4, 'y': 2), spec=P('x', 'y'))";
  CHECK(s.to_string() == repr);
  CHECK_THROWS_MATCHES(s.shard_shape({8}), value_error,
                       Message("Sharding " + repr +
                               " is only valid for values of rank at least 2, but was applied to a value of rank 1."));
  CHECK_THROWS_MATCHES(s.devices_indices_map({}), value_error,
                       Message("Sharding " + repr +
                               " is only valid for values of rank at least 2, but was applied to a value of rank "
                               "0. For scalars the PartitionSpec should be P()"));
  CHECK_THROWS_AS(s.check_compatible({8}), value_error);
  CHECK_NOTHROW(s.check_compatible({8, 2, 1}));
  CHECK(named_sharding(m, P()).shard_shape({}).empty());
}

TEST_CASE("index_map: IndivisibleError: a dimension the tiling does not divide", "[index_map][errors]") {
  mesh m({4, 2}, virtual_cpu_devices(8), {"x", "y"});
  named_sharding s(m, P("x"));
  CHECK_THROWS_MATCHES(s.shard_shape({6, 2}), indivisible_error,
                       Message("Sharding NamedSharding(mesh=Mesh('x': 4, 'y': 2), spec=P('x',)) implies that array "
                               "axis 0 is partitioned 4 times, but the dimension size is 6 (full shape: (6, 2), "
                               "per-dimension tiling factors: [4, 1] should evenly divide the shape)"));
  named_sharding t(m, P(none, names{"x", "y"}));
  CHECK_THROWS_MATCHES(t.devices_indices_map({3, 12}), indivisible_error,
                       Message("Sharding NamedSharding(mesh=Mesh('x': 4, 'y': 2), spec=P(None, ('x', 'y'))) implies "
                               "that array axis 1 is partitioned 8 times, but the dimension size is 12 (full shape: "
                               "(3, 12), per-dimension tiling factors: [1, 8] should evenly divide the shape)"));
  CHECK_THROWS_AS(named_sharding(mesh_8(), P("x")).shard_placements({4}), indivisible_error);
}

TEST_CASE("index_map: SingleDeviceSharding: everything on one device", "[index_map]") {
  const auto d = virtual_cpu_devices(3)[2];
  single_device_sharding s(d);
  CHECK(s.to_string() == "SingleDeviceSharding(device=CpuDevice(id=2))");
  CHECK(s.is_fully_replicated());
  CHECK(s.shard_shape({5, 7}) == shape_t{5, 7});
  const auto map = s.devices_indices_map({5, 7});
  REQUIRE(map.size() == 1);
  CHECK(map[0].first == d);
  CHECK(map[0].second == shard_index{{0, 5}, {0, 7}});
  CHECK(s.replica_id(d, {5}) == 0);
  CHECK_THROWS_AS(s.replica_id(virtual_cpu_devices(1)[0], {5}), value_error);
  CHECK(s.shard_shape({}).empty());
  CHECK(s.is_fully_addressable(0));
  CHECK_FALSE(s.is_fully_addressable(1));
  CHECK(s.is_equivalent_to(named_sharding(mesh({1}, {d}, {"x"}), P("x")), 2));
}

TEST_CASE("index_map: addressability follows the devices' processes", "[index_map]") {
  auto d = virtual_cpu_devices(4);
  d[3].process_index = 1;
  named_sharding s(mesh({4}, d, {"x"}), P("x"));
  CHECK_FALSE(s.is_fully_addressable(0));
  named_sharding local(mesh({3}, {d[0], d[1], d[2]}, {"x"}), P("x"));
  CHECK(local.is_fully_addressable(0));
  CHECK(s.num_devices() == 4);
}
