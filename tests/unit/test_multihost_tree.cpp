// The tree layer of the multihost utilities: structures, flatten/unflatten round trips, tree_map
// over every container kind, and the Python-style printing assert_equal's message uses.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <map>
#include <string>
#include <tuple>
#include <vector>

using am::host_array;
using am::tree_def;

TEST_CASE("multihost: tree structures print like JAX's PyTreeDef", "[unit][multihost]") {
  CHECK(am::tree_structure(1.0f).to_string() == "PyTreeDef(*)");
  CHECK(am::tree_structure(std::tuple<>{}).to_string() == "PyTreeDef(())");
  CHECK(am::tree_structure(std::tuple<int>{1}).to_string() == "PyTreeDef((*,))");
  std::map<std::string, std::vector<double>> m{{"b", {1.0, 2.0}}, {"a", {}}};
  CHECK(am::tree_structure(m).to_string() == "PyTreeDef({'a': [], 'b': [*, *]})");
  std::pair<host_array, std::array<std::int64_t, 3>> p{host_array::arange(4), {1, 2, 3}};
  CHECK(am::tree_structure(p).to_string() == "PyTreeDef((*, (*, *, *)))");
  CHECK(am::tree_structure(p).num_leaves() == 4);
  CHECK(am::tree_structure(std::vector<int>{}).num_leaves() == 0);
}

TEST_CASE("multihost: structure equality sees kinds, lengths and keys", "[unit][multihost]") {
  using V = std::vector<float>;
  CHECK(am::tree_structure(V{1, 2}) == am::tree_structure(V{3, 4}));
  CHECK(am::tree_structure(V{1, 2}) != am::tree_structure(V{1}));
  std::map<std::string, int> a{{"x", 1}}, b{{"y", 1}};
  CHECK(am::tree_structure(a) != am::tree_structure(b));
  CHECK(am::tree_structure(std::tuple<int, int>{}) != am::tree_structure(std::vector<int>{0, 0}));
  // std::pair, std::tuple and std::array of two leaves are all the same tuple structure.
  CHECK(am::tree_structure(std::pair<int, float>{}) == am::tree_structure(std::array<double, 2>{}));
}

TEST_CASE("multihost: flatten and unflatten round-trip every container and leaf kind", "[unit][multihost]") {
  using T = std::tuple<std::uint8_t, std::vector<host_array>, std::map<std::string, std::pair<bool, double>>,
                       std::array<std::int32_t, 2>>;
  T t{std::uint8_t{7},
      {host_array::arange(3, am::dtype::float32), host_array::zeros({2, 2}, am::dtype::int64)},
      {{"k", {true, 2.5}}, {"j", {false, -1.0}}},
      {4, 5}};
  auto [leaves, def] = am::tree_flatten(t);
  REQUIRE(leaves.size() == 9);
  // Scalars become 0-d host arrays of their own dtype.
  CHECK(std::get<host_array>(leaves[0]).dtype() == am::dtype::uint8);
  CHECK(std::get<host_array>(leaves[0]).ndim() == 0);
  CHECK(std::get<host_array>(leaves[3]).dtype() == am::dtype::bool_); // "j" sorts first
  auto back = am::tree_unflatten<T>(def, leaves);
  CHECK(std::get<0>(back) == 7);
  CHECK(am::array_identical(std::get<1>(back)[0], std::get<1>(t)[0]));
  CHECK(am::array_identical(std::get<1>(back)[1], std::get<1>(t)[1]));
  CHECK(std::get<2>(back).at("j").first == false);
  CHECK(std::get<2>(back).at("k").second == 2.5);
  CHECK(std::get<3>(back)[1] == 5);
}

TEST_CASE("multihost: unflatten refuses a structure the type cannot have", "[unit][multihost]") {
  auto [leaves, def] = am::tree_flatten(std::vector<float>{1, 2, 3});
  CHECK_THROWS_WITH((am::tree_unflatten<std::tuple<float, float, float>>(def, leaves)),
                    "tree_unflatten: the structure PyTreeDef([*, *, *]) does not fit the type: expected a tuple of 3 "
                    "there");
  CHECK_THROWS_WITH(am::tree_unflatten<std::vector<float>>(def, std::span<const am::tree_leaf>(leaves).first(2)),
                    "tree_unflatten: PyTreeDef([*, *, *]) has 3 leaves but 2 were given");
  CHECK_THROWS_AS(am::tree_unflatten<std::vector<am::array>>(def, leaves), am::type_error);
}

TEST_CASE("multihost: tree_map keeps the structure and visits leaves in flatten order", "[unit][multihost]") {
  std::tuple<int, std::map<std::string, float>, std::vector<double>> t{1, {{"b", 2.f}, {"a", 3.f}}, {4.0, 5.0}};
  std::vector<double> seen;
  auto mapped = am::tree_map(
      [&](const auto& v) {
        seen.push_back(static_cast<double>(v));
        return host_array::scalar(static_cast<double>(v) * 2);
      },
      t);
  CHECK(seen == std::vector<double>{1, 3, 2, 4, 5});
  static_assert(std::is_same_v<decltype(mapped), std::tuple<host_array, std::map<std::string, host_array>,
                                                            std::vector<host_array>>>);
  CHECK(std::get<1>(mapped).at("a").item<double>() == 6.0);
  // pair and std::array stay what they were.
  auto p = am::tree_map([](int v) { return v + 1.0; }, std::pair<int, std::array<int, 2>>{1, {2, 3}});
  static_assert(std::is_same_v<decltype(p), std::pair<double, std::array<double, 2>>>);
  CHECK(p.second[1] == 4.0);
}

TEST_CASE("multihost: a structure formats its leaves as Python prints nested containers", "[unit][multihost]") {
  std::tuple<int, std::vector<int>, std::map<std::string, int>> t{0, {1}, {{"k", 2}}};
  auto text = am::tree_structure(t).format(
      [](std::size_t k, bool top) { return (top ? "top" : "v") + std::to_string(k); });
  CHECK(text == "(v0, [v1], {'k': v2})");
  CHECK(am::tree_structure(3).format([](std::size_t, bool top) { return top ? "str" : "repr"; }) == "str");
  CHECK(am::tree_structure(std::tuple<int>{}).format([](std::size_t, bool) { return "x"; }) == "(x,)");
}

TEST_CASE("multihost: partition specs are leaves of spec trees, am::none is JAX's None node", "[unit][multihost]") {
  // JAX: tree_structure((P('x'), None)) is PyTreeDef((*, None)); an empty optional is a leaf here.
  std::tuple<am::partition_spec, std::optional<am::partition_spec>, am::none_t> specs{am::P("x"), std::nullopt,
                                                                                     am::none};
  CHECK(am::tree_structure(specs).to_string() == "PyTreeDef((*, *, None))");
  int n = 0;
  am::tree_for_each(specs, [&](const auto&) { ++n; });
  CHECK(n == 2);
}

TEST_CASE("multihost: shardings of any kind are leaves of sharding trees, other types are not trees",
          "[unit][multihost]") {
  static_assert(am::sharding_leaf<am::sharding_ptr>);
  static_assert(am::sharding_leaf<std::shared_ptr<const am::named_sharding>>);
  static_assert(!am::sharding_leaf<std::shared_ptr<am::named_sharding>>); // shardings are held const
  static_assert(am::is_tree_v<std::map<std::string, std::vector<am::sharding_ptr>>>);
  static_assert(!am::is_tree_v<std::string>);
  static_assert(!am::is_tree_v<std::map<int, float>>); // dict keys are strings
  std::tuple<am::sharding_ptr, std::shared_ptr<const am::named_sharding>> s{};
  CHECK(am::tree_structure(s).num_leaves() == 2);
}
