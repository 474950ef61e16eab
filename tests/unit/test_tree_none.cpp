// am::none in trees of data, as JAX's None: an empty node (PyTreeDef((*, None))) that tree_map
// keeps and tree_flatten skips; device_put, host_local_array_to_global_array and its inverse keep
// it in place; a pspecs tree is a prefix of the inputs' structure (one spec covers a subtree, any
// spec covers a None), and None where a leaf needs a spec is refused with JAX's words. Expected
// structures and results are those of JAX 0.10.2 for the same Python trees.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include "support/cpu_options.hpp"

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace mh = am::multihost;
using am::host_array;

TEST_CASE("am::none in a tree is JAX's None: no leaves, kept by tree_map", "[unit][multihost]") {
  auto x = host_array::arange(4, am::dtype::float32);
  auto t = std::make_tuple(x, am::none);
  CHECK(am::tree_structure(t).to_string() == "PyTreeDef((*, None))");
  std::map<std::string, std::tuple<am::none_t, std::vector<host_array>>> nested{{"b", {am::none, {x}}}};
  CHECK(am::tree_structure(nested).to_string() == "PyTreeDef({'b': (None, [*])})");
  auto [leaves, def] = am::tree_flatten(t);
  CHECK(leaves.size() == 1);
  CHECK(def.num_leaves() == 1);
  auto mapped = am::tree_map([](const host_array& v) { return v.astype(am::dtype::int32); }, t);
  static_assert(std::is_same_v<std::tuple_element_t<1, decltype(mapped)>, am::none_t>);
  CHECK(std::get<0>(mapped).dtype() == am::dtype::int32);
  auto back = am::tree_unflatten<std::tuple<host_array, am::none_t>>(def, leaves);
  CHECK(am::array_identical(std::get<0>(back), x));
  CHECK_THROWS_WITH((am::tree_unflatten<std::tuple<host_array, host_array>>(def, leaves)),
                    "tree_unflatten: the structure PyTreeDef(None) does not fit the type: expected a leaf there");
  CHECK(am::tree_structure(am::none).to_string() == "PyTreeDef(None)");
}

TEST_CASE("device_put and the host-local conversions keep a None in place", "[unit][multihost]") {
  am::runtime rt(am::test::cpu_options(4));
  am::mesh m({4}, am::devices(), {"x"});
  auto split = am::make_named_sharding(m, am::P("x"));
  auto data = host_array::arange(8, am::dtype::float32);
  auto put = am::device_put(std::make_tuple(data, am::none), split);
  CHECK(std::get<0>(put).sharding() == split);
  auto put_tree = am::device_put(std::make_tuple(data, am::none), std::make_tuple(split, am::none));
  CHECK(am::array_identical(std::get<0>(put_tree).to_host(), data));
  // JAX: host_local_array_to_global_array((x, None), mesh, (P('x'), None)) and with P('x') alone.
  auto g = mh::host_local_array_to_global_array(std::make_tuple(data, am::none), m, std::make_tuple(am::P("x"), am::none));
  static_assert(std::is_same_v<std::tuple_element_t<1, decltype(g)>, am::none_t>);
  CHECK(std::get<0>(g).shape() == am::shape_t{8});
  auto g1 = mh::host_local_array_to_global_array(std::make_tuple(data, am::none), m, am::P("x"));
  CHECK(am::array_identical(std::get<0>(g1).to_host(), data));
  auto h = mh::global_array_to_host_local_array(std::make_tuple(std::get<0>(g), am::none), m,
                                                std::make_tuple(am::P("x"), am::P("x")));
  CHECK(am::array_identical(std::get<0>(h).to_host(), data));
  // Host leaves and None together (JAX's call with numpy leaves and None).
  auto hl = mh::global_array_to_host_local_array(std::make_tuple(data, am::none, 2.5f), m,
                                                 std::make_tuple(am::P("x"), am::none, am::P()));
  CHECK(std::get<2>(hl).to_host().item<float>() == 2.5f);
}

TEST_CASE("a pspecs tree is a prefix of the inputs' structure, as JAX's", "[unit][multihost]") {
  am::runtime rt(am::test::cpu_options(4));
  am::mesh m({4}, am::devices(), {"x"});
  auto data = host_array::arange(8, am::dtype::float32);
  // JAX: host_local_array_to_global_array({'a': [x, x]}, mesh, {'a': P('x')}): one spec for the list.
  std::map<std::string, std::vector<host_array>> inputs{{"a", {data, data}}};
  auto g = mh::host_local_array_to_global_array(inputs, m, std::map<std::string, am::partition_spec>{{"a", am::P("x")}});
  REQUIRE(g.at("a").size() == 2);
  CHECK(g.at("a")[1].sharding()->is_equivalent_to(*am::make_named_sharding(m, am::P("x")), 1));
  // JAX: None where a leaf needs a spec is refused; a spec tree of other containers too.
  CHECK_THROWS_WITH(mh::host_local_array_to_global_array(std::make_tuple(data, data), m, std::make_tuple(am::P("x"), am::none)),
                    Catch::Contains("`None` is not a valid input to the pspecs argument"));
  CHECK_THROWS_WITH(mh::host_local_array_to_global_array(std::make_tuple(data), m, std::vector<am::partition_spec>{am::P("x")}),
                    "host_local_array_to_global_array: pspecs must be one PartitionSpec or a tree prefix of the inputs' "
                    "structure PyTreeDef((*,)), but its structure is PyTreeDef([*])");
}
