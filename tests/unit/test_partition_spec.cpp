// PartitionSpec: canonical entries, JAX's repr, equality, the nested-tuple error and the command-line
// parser.
#include "actormesh/sharding/partition_spec.hpp"

#include "actormesh/actors/errors.hpp"

#include <catch2/catch.hpp>

using namespace am;
using Catch::Matchers::Message;
using names = std::vector<std::string>;

TEST_CASE("partition_spec: PartitionSpec prints like JAX's repr", "[partition_spec]") {
  CHECK(P().to_string() == "P()");
  CHECK(P("x").to_string() == "P('x',)");
  CHECK(P("x", none).to_string() == "P('x', None)");
  CHECK(P(none, "y").to_string() == "P(None, 'y')");
  CHECK(P(none).to_string() == "P(None,)");
  CHECK(P("a", "b").to_string() == "P('a', 'b')");
  CHECK(P(names{"x", "y"}).to_string() == "P(('x', 'y'),)");
  CHECK(P(names{"x", "y"}, none).to_string() == "P(('x', 'y'), None)");
  CHECK(P(names{"x", "y"}, "z").to_string() == "P(('x', 'y'), 'z')");
  // Python's repr of a string holding a quote.
  CHECK(P("it's").to_string() == "P(\"it's\",)");
  CHECK(P("a\\b").to_string() == "P('a\\\\b',)");
}

TEST_CASE("partition_spec: entries are canonical: empty tuple is None, a one-element tuple the bare name", "[partition_spec]") {
  CHECK(spec_entry{} == spec_entry(none));
  CHECK(spec_entry(names{}) == spec_entry(none));
  CHECK(spec_entry(names{"x"}) == spec_entry("x"));
  CHECK(spec_entry{"x"}.to_string() == "'x'");
  CHECK(spec_entry("") == spec_entry(none));
  CHECK(spec_entry{"x", "y"}.is_tuple());
  CHECK_FALSE(spec_entry("x").is_tuple());
  CHECK(spec_entry(none).is_none());
  CHECK(spec_entry(none).to_string() == "None");
  CHECK(P(names{"x"}) == P("x"));
  CHECK(P(names{}) == P(none));
  CHECK(partition_spec{{"x", "y"}, none} == P(names{"x", "y"}, none));
  CHECK(partition_spec{"x", none}.to_string() == "P('x', None)");
}

TEST_CASE("partition_spec: equality is entry by entry, like JAX", "[partition_spec]") {
  CHECK(P("x", none) == P("x", none));
  CHECK(P("x", none) != P("x"));
  CHECK(P("x", "y") != P("y", "x"));
  CHECK(P(names{"x", "y"}) != P(names{"y", "x"}));
  CHECK(P() == partition_spec{});
  CHECK(P("x", "y").size() == 2);
  CHECK(P(names{"x", "y"}, "z").used_axes() == names{"x", "y", "z"});
}

TEST_CASE("partition_spec: a tuple inside a tuple is JAX's nested-tuple error", "[partition_spec]") {
  using r = raw_spec_entry;
  const auto nested = r::make_tuple({r::make_name("a"), r::make_tuple({r::make_name("b"), r::make_name("c")})});
  CHECK_THROWS_MATCHES(partition_spec::from_raw({nested}), value_error,
                       Message("A tuple inside PartitionSpec cannot contain a nested tuple. Got partition: "
                               "('a', ('b', 'c')) and the nested tuple: ('b', 'c')"));
  // A one-element tuple is unwrapped once (canonical form), so ((a, b),) is the tuple (a, b).
  const auto wrapped = r::make_tuple({r::make_tuple({r::make_name("a"), r::make_name("b")})});
  CHECK(partition_spec::from_raw({wrapped}) == P(names{"a", "b"}));
  // ... but only once: (((a, b),),) still nests.
  CHECK_THROWS_AS(partition_spec::from_raw({r::make_tuple({wrapped})}), value_error);
  // None inside a tuple is not an axis name.
  CHECK_THROWS_MATCHES(partition_spec::from_raw({r::make_tuple({r::make_name("a"), r::make_none()})}),
                       value_error,
                       Message("A tuple inside PartitionSpec can only contain mesh axis names, but ('a', None) "
                               "contains None"));
  CHECK(partition_spec::from_raw({r::make_none(), r::make_name("x"), r::make_tuple({})}) == P(none, "x", none));
}

TEST_CASE("partition_spec: the command-line spec syntax", "[partition_spec]") {
  CHECK(parse_partition_spec("") == P());
  CHECK(parse_partition_spec("   ") == P());
  CHECK(parse_partition_spec("x") == P("x"));
  CHECK(parse_partition_spec("x,none") == P("x", none));
  CHECK(parse_partition_spec("None, y") == P(none, "y"));
  CHECK(parse_partition_spec("a+b") == P(names{"a", "b"}));
  CHECK(parse_partition_spec("a+b,none") == P(names{"a", "b"}, none));
  CHECK(parse_partition_spec("b + a, c") == P(names{"b", "a"}, "c"));
  CHECK(parse_partition_spec("(a,b),c") == P(names{"a", "b"}, "c"));
  CHECK(parse_partition_spec("(a)") == P("a"));
  CHECK(parse_partition_spec("(a,)") == P("a"));
  CHECK(parse_partition_spec("()") == P(none));
  CHECK(parse_partition_spec("((a,b))") == P(names{"a", "b"}));
  CHECK(parse_partition_spec("data_parallel,model-2") == P("data_parallel", "model-2"));
}

TEST_CASE("partition_spec: bad command-line specs", "[partition_spec]") {
  const std::string hint =
      "; write entries separated by ',', none for an unsharded dimension and a+b for a tuple of mesh axes";
  CHECK_THROWS_MATCHES(parse_partition_spec("x,,y"), value_error,
                       Message("Invalid partition spec 'x,,y' at position 3: empty entry" + hint));
  CHECK_THROWS_MATCHES(parse_partition_spec("x+"), value_error,
                       Message("Invalid partition spec 'x+' at position 3: missing axis name after '+'" + hint));
  CHECK_THROWS_MATCHES(parse_partition_spec("(a,b"), value_error,
                       Message("Invalid partition spec '(a,b' at position 5: expected ')' before the end" + hint));
  CHECK_THROWS_MATCHES(parse_partition_spec("x)"), value_error,
                       Message("Invalid partition spec 'x)' at position 2: expected ',', got ')'" + hint));
  CHECK_THROWS_AS(parse_partition_spec(",x"), value_error);
  CHECK_THROWS_AS(parse_partition_spec("x,"), value_error);
  // The nested-tuple error is reachable from the command line.
  CHECK_THROWS_MATCHES(parse_partition_spec("x,a+(b+c)"), value_error,
                       Message("A tuple inside PartitionSpec cannot contain a nested tuple. Got partition: "
                               "('a', ('b', 'c')) and the nested tuple: ('b', 'c')"));
  CHECK_THROWS_AS(parse_partition_spec("a+none"), value_error);
  // The raw parse keeps what was written.
  const auto raw = parse_raw_partition_spec("a+(b+c)");
  REQUIRE(raw.size() == 1);
  CHECK(raw[0].form == raw_spec_entry::kind::tuple);
  CHECK(raw[0].elements.size() == 2);
}
