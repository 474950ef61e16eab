// PositionalSharding: numpy-like reshape / transpose / replicate of device sets, its repr, its rank
// rule, and the equivalences with NamedSharding listed in REFERENCE.md.
#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/positional_sharding.hpp"
#include "actormesh/sharding/sharding_errors.hpp"

#include <catch2/catch.hpp>

using namespace am;
using Catch::Matchers::Message;
using names = std::vector<std::string>;
using shape_t = std::vector<std::int64_t>;

namespace {

std::vector<device> seed_order() {
  const auto d = virtual_cpu_devices(8);
  std::vector<device> out;
  for (int i : {0, 1, 2, 3, 6, 7, 4, 5})
    out.push_back(d[static_cast<std::size_t>(i)]);
  return out;
}

std::vector<int> ids(const std::vector<device>& set) {
  std::vector<int> out;
  for (const auto& d : set)
    out.push_back(d.id);
  return out;
}

} // namespace

TEST_CASE("positional_sharding: REFERENCE.md's equivalences on 8 devices", "[positional_sharding]") {
  const auto devices = virtual_cpu_devices(8);
  positional_sharding s(devices);
  mesh m(create_device_mesh({4, 2}, devices), {"x", "y"});
  auto named = [&](const partition_spec& spec) { return named_sharding(m, spec); };
  const auto s42 = s.reshape({4, 2});
  CHECK(s42.is_equivalent_to(named(P("x", "y")), 2));
  CHECK(s42.replicate(1).is_equivalent_to(named(P("x")), 2));
  CHECK(s42.replicate(0).is_equivalent_to(named(P(none, "y")), 2));
  CHECK(s.reshape({8, 1}).is_equivalent_to(named(P(names{"x", "y"})), 2));
  CHECK(s42.replicate().is_equivalent_to(named(P()), 2));
  // The same holds the other way round and shows in the device -> index maps.
  CHECK(named(P("x", "y")).is_equivalent_to(s42, 2));
  CHECK(s42.shard_placements({8, 4}) == named(P("x", "y")).shard_placements({8, 4}));
  CHECK(s42.replicate(0).shard_placements({8, 4}) == named(P(none, "y")).shard_placements({8, 4}));
  // A fully replicated sharding fits any rank.
  CHECK(s42.replicate().is_equivalent_to(named(P()), 3));
  CHECK(s42.replicate().is_equivalent_to(named(P()), 0));
}

TEST_CASE("positional_sharding: shardings that differ are not equivalent", "[positional_sharding]") {
  const auto devices = virtual_cpu_devices(8);
  positional_sharding s(devices);
  mesh m({4, 2}, devices, {"x", "y"});
  CHECK_FALSE(s.reshape({4, 2}).is_equivalent_to(named_sharding(m, P("y", "x")), 2));
  CHECK_FALSE(s.reshape({4, 2}).is_equivalent_to(named_sharding(m, P("x")), 2));
  CHECK_FALSE(s.reshape({2, 4}).is_equivalent_to(named_sharding(m, P("x", "y")), 2));
  // The same tiling over devices in another order is another layout.
  CHECK_FALSE(positional_sharding(seed_order()).reshape({4, 2}).is_equivalent_to(named_sharding(m, P("x", "y")), 2));
  // Rank 2 sharding, rank 1 value: not usable, so not equivalent.
  CHECK_FALSE(s.reshape({4, 2}).is_equivalent_to(named_sharding(m, P("x")), 1));
  mesh m_seed(create_device_mesh({4, 2}, seed_order()), {"x", "y"});
  CHECK(positional_sharding(seed_order()).reshape({4, 2}).is_equivalent_to(named_sharding(m_seed, P("x", "y")), 2));
}

TEST_CASE("positional_sharding: repr like the seed's (numpy array of device sets)", "[positional_sharding]") {
  positional_sharding s(seed_order());
  CHECK(s.to_string() == "PositionalSharding([{CPU 0} {CPU 1} {CPU 2} {CPU 3} {CPU 6} {CPU 7} {CPU 4} {CPU 5}])");
  CHECK(s.reshape({4, 2}).to_string() == "PositionalSharding([[{CPU 0} {CPU 1}]\n"
                                         "                    [{CPU 2} {CPU 3}]\n"
                                         "                    [{CPU 6} {CPU 7}]\n"
                                         "                    [{CPU 4} {CPU 5}]])");
  CHECK(s.reshape({1, 8}).to_string() ==
        "PositionalSharding([[{CPU 0} {CPU 1} {CPU 2} {CPU 3} {CPU 6} {CPU 7} {CPU 4} {CPU 5}]])");
  CHECK(s.reshape({4, 2}).replicate(0).to_string() == "PositionalSharding([[{CPU 0, 2, 4, 6} {CPU 1, 3, 5, 7}]])");
  CHECK(s.replicate(std::nullopt, false).to_string() == "PositionalSharding({CPU 0, 1, 2, 3, 4, 5, 6, 7})");
  // Long rows wrap at numpy's 100 columns, 3-d arrays get a blank line between blocks.
  positional_sharding wide(virtual_cpu_devices(32));
  CHECK(wide.to_string() ==
        "PositionalSharding([{CPU 0} {CPU 1} {CPU 2} {CPU 3} {CPU 4} {CPU 5} {CPU 6} {CPU 7} {CPU 8}\n"
        "                    {CPU 9} {CPU 10} {CPU 11} {CPU 12} {CPU 13} {CPU 14} {CPU 15} {CPU 16}\n"
        "                    {CPU 17} {CPU 18} {CPU 19} {CPU 20} {CPU 21} {CPU 22} {CPU 23} {CPU 24}\n"
        "                    {CPU 25} {CPU 26} {CPU 27} {CPU 28} {CPU 29} {CPU 30} {CPU 31}])");
  CHECK(positional_sharding(virtual_cpu_devices(12)).reshape({2, 3, 2}).to_string() ==
        "PositionalSharding([[[{CPU 0} {CPU 1}]\n"
        "                     [{CPU 2} {CPU 3}]\n"
        "                     [{CPU 4} {CPU 5}]]\n"
        "\n"
        "                    [[{CPU 6} {CPU 7}]\n"
        "                     [{CPU 8} {CPU 9}]\n"
        "                     [{CPU 10} {CPU 11}]]])");
}

TEST_CASE("positional_sharding: replicate is a union along an axis, keepdims by default", "[positional_sharding]") {
  const auto s = positional_sharding(seed_order()).reshape({4, 2});
  CHECK(s.replicate(0).shape() == shape_t{1, 2});
  CHECK(s.replicate(1).shape() == shape_t{4, 1});
  CHECK(s.replicate(-1).shape() == shape_t{4, 1});
  CHECK(s.replicate(0, false).shape() == shape_t{2});
  CHECK(s.replicate().shape() == shape_t{1, 1});
  CHECK(s.replicate(std::nullopt, false).shape().empty());
  const auto sets = s.replicate(1).device_sets();
  REQUIRE(sets.size() == 4);
  CHECK(ids(sets[2]) == std::vector<int>{6, 7});
  CHECK(ids(s.replicate(0).device_sets()[0]) == std::vector<int>{0, 2, 6, 4}); // position order
  CHECK(s.replicate(0).replicate(1).is_fully_replicated());
  CHECK_FALSE(s.replicate(0).is_fully_replicated());
  CHECK_THROWS_MATCHES(s.replicate(2), value_error, Message("axis 2 is out of bounds for array of dimension 2"));
  CHECK_THROWS_MATCHES(s.replicate(-3), value_error, Message("axis -3 is out of bounds for array of dimension 2"));
}

TEST_CASE("positional_sharding: reshape and transpose like numpy", "[positional_sharding]") {
  positional_sharding s(virtual_cpu_devices(8));
  CHECK(s.reshape({4, 2}).shape() == shape_t{4, 2});
  CHECK(s.reshape({-1, 4}).shape() == shape_t{2, 4});
  const auto t = s.reshape({4, 2}).transpose();
  CHECK(t.shape() == shape_t{2, 4});
  CHECK(ids(t.device_sets()[1]) == std::vector<int>{2});          // element (0, 1) was (1, 0)
  CHECK(t == s.reshape({4, 2}).transpose({1, 0}));
  CHECK(t.transpose() == s.reshape({4, 2}));
  CHECK(s.reshape({2, 2, 2}).transpose({2, 0, 1}).device_sets()[1][0].id == 2);
  CHECK_THROWS_MATCHES(s.reshape({3, 2}), value_error, Message("cannot reshape array of size 8 into shape (3,2)"));
  CHECK_THROWS_MATCHES(s.reshape({4, 2}).transpose({0, 0}), value_error, Message("repeated axis in transpose"));
  CHECK_THROWS_MATCHES(s.reshape({4, 2}).transpose({0}), value_error, Message("axes don't match array"));
  CHECK_THROWS_MATCHES(positional_sharding(std::vector<device>{}), value_error,
                       Message("PositionalSharding.__init__ requires at least one device, got []"));
}

TEST_CASE("positional_sharding: the value's rank must equal the sharding's unless fully replicated", "[positional_sharding]") {
  const auto s = positional_sharding(virtual_cpu_devices(8)).reshape({4, 2});
  CHECK_THROWS_MATCHES(s.shard_shape({8}), value_error,
                       Message("Sharding " + s.to_string() +
                               " is only valid for values of rank 2, but was applied to a value of rank 1"));
  CHECK_THROWS_AS(s.shard_shape({8, 2, 2}), value_error);
  CHECK(s.shard_shape({8, 2}) == shape_t{2, 1});
  CHECK(s.replicate().shard_shape({8, 2, 2}) == shape_t{8, 2, 2});
  CHECK(s.replicate().shard_shape({}).empty());
  CHECK_THROWS_AS(s.shard_shape({6, 2}), indivisible_error);
}

TEST_CASE("positional_sharding: placements and replica ids follow positions", "[positional_sharding]") {
  const auto s = positional_sharding(seed_order()).reshape({4, 2}).replicate(0);
  const auto placements = s.shard_placements({8192, 8192});
  REQUIRE(placements.size() == 8);
  // Device 6 sits at position 4 and is the third holder of the left half; device 4 the fourth.
  CHECK(placements[6].index == shard_index{{0, 8192}, {0, 4096}});
  CHECK(placements[6].replica_id == 2);
  CHECK(placements[4].replica_id == 3);
  CHECK(placements[7].index == shard_index{{0, 8192}, {4096, 8192}});
  CHECK(placements[7].replica_id == 2);
  CHECK(s.device_set() == virtual_cpu_devices(8));
  CHECK(s.device_assignment() == seed_order());
  // As a sharding_ptr.
  sharding_ptr p = share(s);
  CHECK(p->num_devices() == 8);
}
