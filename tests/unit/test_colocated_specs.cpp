// Specs of colocated calls: shape_dtype_struct (jax.ShapeDtypeStruct) and spec_tree (a pytree of
// them): built from arrays, taken apart by child, compared, printed; and the specialization merge.
#include <actormesh.hpp>

#include <catch2/catch.hpp>
#include "support/cpu_options.hpp"

TEST_CASE("colocated specs: a tree of arrays gives its structure and one spec per leaf", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  am::mesh m({2}, am::devices(), {"x"});
  auto s = am::make_named_sharding(m, am::P("x"));
  auto a = am::device_put(am::host_array::from_vector(std::vector<float>{1, 2, 3, 4}), s);
  auto b = am::device_put(am::host_array::scalar(7), am::make_named_sharding(m, am::P()));
  auto t = am::spec_tree::of(std::tuple{a, std::vector<am::array>{b, a}});
  CHECK(t.def().to_string() == "PyTreeDef((*, [*, *]))");
  REQUIRE(t.leaves().size() == 3);
  CHECK(t.leaves()[0] == am::shape_dtype_struct{{4}, am::dtype::float32, s});
  CHECK(t.leaves()[1].dtype == am::dtype::int32);
  CHECK(t.size() == 2);
  CHECK(t[0] == am::spec_tree(t.leaves()[0]));
  CHECK(t[1].def().to_string() == "PyTreeDef([*, *])");
  CHECK(t[1].leaves()[1] == t.leaves()[0]);
  CHECK_THROWS_AS(t[2], am::value_error);
  CHECK(t[0].to_string() == "ShapeDtypeStruct(shape=(4,), dtype=float32, sharding=" + s->to_string() + ")");
  CHECK(am::spec_tree::tuple({t[0], t[1]}) == t);
  CHECK_THROWS_AS(am::spec_tree(t.def(), {}), am::value_error);
}

TEST_CASE("colocated specs: equal specs need the same layout on the same devices", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(2));
  auto devs = am::devices();
  am::mesh m({2}, devs, {"x"});
  am::mesh swapped({2}, {devs[1], devs[0]}, {"x"});
  am::shape_dtype_struct x{{4}, am::dtype::float32, am::make_named_sharding(m, am::P("x"))};
  auto same = x;
  same.sharding = am::make_named_sharding(m, am::P("x")); // another object, the same layout
  CHECK(x == same);
  auto other_order = x;
  other_order.sharding = am::make_named_sharding(swapped, am::P("x"));
  CHECK_FALSE(x == other_order);
  auto other_dtype = x;
  other_dtype.dtype = am::dtype::int32;
  CHECK_FALSE(x == other_dtype);
}

TEST_CASE("colocated specs: a specialization adds fields and refuses repeats", "[unit][colocated]") {
  am::specialization base{.devices = std::vector<am::device>{}};
  auto merged = am::detail::merge(base, {.out_specs_fn = [](const am::spec_tree& in) { return in; }});
  CHECK(merged.devices.has_value());
  CHECK(static_cast<bool>(merged.out_specs_fn));
  CHECK_FALSE(merged.in_specs.has_value());
  CHECK_THROWS_WITH(am::detail::merge(merged, {.devices = std::vector<am::device>{}}), "devices already specified");
}
