// Result dtypes of array operations against the table jax.numpy (64-bit types enabled) and numpy
// wrote (tests/data/jax_promotion_table.txt, from tools/gen_jax_promotion_table.py): every pair of
// dtypes, arrays with Python-style scalars, true division, comparisons, float functions and
// reductions, under the default rule (JAX's) and under numpy's, on CPU devices.
#include "support/arrays.hpp"
#include "support/data_table.hpp"

#include "actormesh/actors/dtype_promotion.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <string>

using namespace am;
using namespace am::testing;

namespace {

using record = table_record;

const std::vector<record>& table_records() {
  static const auto records = read_data_table("jax_promotion_table.txt");
  return records;
}

/// The dtype actormesh gives where JAX or numpy name one actormesh lacks (documented in
/// actors/dtype_promotion.hpp): uint64 sums are int64, numpy's int8 square of bools is int32.
std::string expected_name(const std::string& s) {
  if (s == "uint64")
    return "int64";
  if (s == "int8")
    return "int32";
  return s;
}

using binary_fn = std::function<array(const array&, const array&)>;
using scalar_fn = std::function<array(const array&, scalar)>;
using unary_fn = std::function<array(const array&)>;

const std::map<std::string, binary_fn>& binaries() {
  static const std::map<std::string, binary_fn> m{
      {"add", [](const array& a, const array& b) { return a + b; }},
      {"divide", [](const array& a, const array& b) { return a / b; }},
      {"less", [](const array& a, const array& b) { return less(a, b); }},
      {"maximum", [](const array& a, const array& b) { return maximum(a, b); }}};
  return m;
}

const std::map<std::string, scalar_fn>& with_scalars() {
  static const std::map<std::string, scalar_fn> m{
      {"add", [](const array& a, scalar b) { return a + b; }},
      {"divide", [](const array& a, scalar b) { return a / b; }},
      {"less", [](const array& a, scalar b) { return less(a, b); }},
      {"maximum", [](const array& a, scalar b) { return maximum(a, b); }}};
  return m;
}

const std::map<std::string, unary_fn>& unaries() {
  static const std::map<std::string, unary_fn> m{
      {"sin", [](const array& a) { return sin(a); }},   {"sqrt", [](const array& a) { return sqrt(a); }},
      {"abs", [](const array& a) { return abs(a); }},   {"negative", [](const array& a) { return -a; }},
      {"square", [](const array& a) { return square(a); }}, {"sum", [](const array& a) { return sum(a); }},
      {"mean", [](const array& a) { return mean(a); }}, {"max", [](const array& a) { return max(a); }},
      {"min", [](const array& a) { return min(a); }}};
  return m;
}

/// The result of the table's operation of record `r`.
array apply_record(const record& r) {
  if (r[0] == "binary")
    return binaries().at(r[2])(ones_of(dtype_named(r[3])), ones_of(dtype_named(r[4])));
  if (r[0] == "scalar")
    return with_scalars().at(r[2])(ones_of(dtype_named(r[3])), python_scalar(r[4]));
  return unaries().at(r[2])(ones_of(dtype_named(r[3])));
}

void check_rule(const std::string& rule) {
  int checked = 0;
  for (const auto& r : table_records()) {
    if (r[1] != rule)
      continue;
    INFO(r[0] << " " << r[2] << " " << r[3] << (r.size() > 5 ? " " + r[4] : ""));
    auto a = apply_record(r);
    CHECK(std::string(name(a.dtype())) == expected_name(r.back()));
    CHECK(a.to_host().dtype() == a.dtype()); // the devices compute it, in that dtype
    ++checked;
  }
  CHECK(checked > 400);
}

} // namespace

TEST_CASE("array operations promote as jax.numpy does, by default", "[array][promotion][jax]") {
  runtime rt(eight_cpus());
  REQUIRE(array_promotion_rule() == promotion_rule::jax);
  check_rule("jax");
  // Examples of JAX's promotion table.
  CHECK((ones_of(dtype::int32) + ones_of(dtype::float32)).dtype() == dtype::float32);
  CHECK((ones_of(dtype::int64) + ones_of(dtype::float16)).dtype() == dtype::float16);
}

TEST_CASE("numpy's promotion stays available for arrays", "[array][promotion][numpy]") {
  runtime rt(eight_cpus());
  {
    array_promotion_scope numpy_rule(promotion_rule::numpy);
    check_rule("numpy");
    CHECK((ones_of(dtype::int32) + ones_of(dtype::float32)).dtype() == dtype::float64);
  }
  CHECK(array_promotion_rule() == promotion_rule::jax); // the scope restored the default
}

TEST_CASE("the promotion tables are the generated ones, pair by pair", "[promotion]") {
  int pairs = 0;
  for (const auto& r : table_records())
    if (r[0] == "binary" && (r[2] == "add" || r[2] == "maximum")) {
      INFO(r[1] << " " << r[3] << " " << r[4]);
      auto rule = r[1] == "jax" ? promotion_rule::jax : promotion_rule::numpy;
      CHECK(std::string(name(promote_types(dtype_named(r[3]), dtype_named(r[4]), rule))) == r[5]);
      ++pairs;
    }
  CHECK(pairs == 4 * 64);
}
