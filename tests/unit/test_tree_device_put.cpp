// device_put of a whole tree (onto one sharding, or a tree of shardings of the values' structure)
// and global_array_to_host_local_array over trees with host leaves (JAX's call with numpy leaves):
// the containers kept, every leaf an array where it was put, mismatched structures refused.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include "support/cpu_options.hpp"

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace mh = am::multihost;
using am::host_array;

TEST_CASE("device_put of a tree onto one sharding keeps its containers and puts every leaf", "[unit][multihost]") {
  am::runtime rt(am::test::cpu_options(4));
  am::mesh m({4}, am::devices(), {"x"});
  auto split = am::make_named_sharding(m, am::P("x"));
  std::map<std::string, host_array> params{{"b", host_array::arange(4, am::dtype::float32)},
                                           {"w", host_array::arange(8, am::dtype::float32)}};
  std::map<std::string, am::array> placed = am::device_put(params, split);
  REQUIRE(placed.size() == 2);
  CHECK(placed.at("w").sharding()->is_equivalent_to(*split, 1));
  CHECK(placed.at("w").addressable_shards().size() == 4);
  CHECK(am::array_identical(placed.at("b").to_host(), params.at("b")));
  // Arrays, host arrays and scalars mixed, nested in a tuple and a vector.
  auto replicated = am::make_named_sharding(m, am::P());
  auto mixed = am::device_put(std::make_tuple(std::vector<host_array>{host_array::arange(4, am::dtype::int32)}, 2.5f,
                                              placed.at("w")),
                              replicated);
  CHECK(std::get<0>(mixed).at(0).sharding()->is_equivalent_to(*replicated, 1));
  CHECK(std::get<1>(mixed).dtype() == am::dtype::float32);
  CHECK(std::get<1>(mixed).to_host().item<float>() == 2.5f);
  CHECK(std::get<2>(mixed).sharding()->is_equivalent_to(*replicated, 1)); // resharded
}

TEST_CASE("device_put of a tree onto a tree of shardings, and a mismatched one refused", "[unit][multihost]") {
  am::runtime rt(am::test::cpu_options(4));
  am::mesh m({4}, am::devices(), {"x"});
  auto split = am::make_named_sharding(m, am::P("x"));
  auto one = am::make_single_device_sharding(am::devices()[2]);
  auto [a, b] = am::device_put(std::make_pair(host_array::arange(8, am::dtype::int32), 7),
                               std::make_pair(am::sharding_ptr(split), am::sharding_ptr(one)));
  CHECK(a.addressable_shards().size() == 4);
  REQUIRE(b.addressable_shards().size() == 1);
  CHECK(b.addressable_shards()[0].device.id == 2);
  CHECK(b.to_host().item<std::int32_t>() == 7);
  std::vector<host_array> two{host_array::arange(4, am::dtype::int32), host_array::arange(4, am::dtype::int32)};
  CHECK_THROWS_WITH(am::device_put(two, std::vector<am::sharding_ptr>{split}),
                    Catch::StartsWith("device_put: the shardings must be one sharding or a tree of the values' "
                                      "structure PyTreeDef([*, *]), but their structure is PyTreeDef([*])"));
}

TEST_CASE("global_array_to_host_local_array takes host leaves, as JAX takes numpy arrays", "[unit][multihost]") {
  am::runtime rt(am::test::cpu_options(4));
  am::mesh m({4}, am::devices(), {"x"});
  auto data = host_array::arange(8, am::dtype::float32);
  auto [from_host, from_scalar, from_array] = mh::global_array_to_host_local_array(
    std::make_tuple(data, 3, am::device_put(data, am::make_named_sharding(m, am::P("x")))), m,
    std::make_tuple(am::P("x"), am::P(), am::P("x")));
  // One process: the host-local array is the global array, laid out by the pspec.
  CHECK(from_host.sharding()->is_equivalent_to(*am::make_named_sharding(m, am::P("x")), 1));
  CHECK(am::array_identical(from_host.to_host(), data));
  CHECK(from_scalar.shape().empty());
  CHECK(from_scalar.to_host().item<std::int32_t>() == 3);
  CHECK(am::array_identical(from_array.to_host(), data));
  CHECK_THROWS_WITH(mh::global_array_to_host_local_array(data, m, am::none),
                    Catch::Contains("`None` is not a valid input to the pspecs argument"));
}
