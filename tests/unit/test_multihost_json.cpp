// The small JSON reader and writer behind checkpoint indexes: round trips, exact integers,
// escapes, and the errors of bad input.
#include "multihost/detail/json.hpp"

#include "actors/errors.hpp"

#include <catch2/catch.hpp>

using am::detail::json;

TEST_CASE("multihost: JSON values round-trip through dump and parse", "[unit][multihost]") {
  json::object_t o;
  o["int"] = std::int64_t{9007199254740993}; // past a double's exact range: kept exact
  o["neg"] = -4;
  o["real"] = 2.5;
  o["text"] = "a \"quoted\" \\ line\n";
  o["list"] = json::array_t{json(1), json(true), json(nullptr), json("x")};
  o["empty"] = json::object_t{};
  const std::string text = json(o).dump();
  CHECK(text == "{\"empty\":{},\"int\":9007199254740993,\"list\":[1,true,null,\"x\"],\"neg\":-4,\"real\":2.5,"
                "\"text\":\"a \\\"quoted\\\" \\\\ line\\u000a\"}");
  json back = json::parse(text);
  CHECK(back.at("int").as_int("int") == 9007199254740993);
  CHECK(back.at("neg").as_int("neg") == -4);
  CHECK(back.at("text").as_string("text") == "a \"quoted\" \\ line\n");
  CHECK(back.at("list").as_array("list").size() == 4);
  CHECK(back.dump() == text);
  CHECK(json::parse(" [ 1 , 2 ] ").dump() == "[1,2]");
}

TEST_CASE("multihost: bad JSON and wrong types are refused with the place or the field", "[unit][multihost]") {
  CHECK_THROWS_WITH(json::parse("{\"a\": }"), "invalid JSON at offset 6: unexpected character");
  CHECK_THROWS_WITH(json::parse("[1, 2"), "invalid JSON at offset 5: expected ']'");
  CHECK_THROWS_WITH(json::parse("\"open"), "invalid JSON at offset 5: unterminated string");
  CHECK_THROWS_WITH(json::parse("1 2"), "invalid JSON at offset 2: trailing characters");
  CHECK_THROWS_AS(json::parse(std::string(100, '[')), am::value_error); // nested too deeply
  json j = json::parse("{\"shape\": \"8\"}");
  CHECK_THROWS_WITH(j.at("shape").as_array("shape"), "checkpoint index: shape must be an array");
  CHECK_THROWS_WITH(j.at("dtype"), "checkpoint index: missing field 'dtype'");
}
