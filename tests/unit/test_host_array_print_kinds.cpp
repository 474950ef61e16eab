// Printing host arrays of integers and bools, 0-d and empty arrays: every expected string below is
// what numpy 2.4.6 (+ ml_dtypes 0.6.0 for bfloat16) prints for the same array with `str(a)` and
// `repr(a)`, generated once with python and pasted as data.
#include <catch2/catch.hpp>

#include "support/arrays.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

#include "actormesh/sharding/host_array_print.hpp"

using am::dtype;
using am::host_array;

namespace {

using am::testing::array_of;

} // namespace

TEST_CASE("host_array print: int64 right-aligned", "[host_array_print]") {
  const host_array a = array_of<std::int64_t>({-5, 100, 3}, {3}, dtype::int64);
  CHECK(am::to_string(a) == R"np([ -5 100   3])np");
  CHECK(am::repr(a) == R"np(array([ -5, 100,   3]))np");
}

TEST_CASE("host_array print: int32 wraps", "[host_array_print]") {
  const host_array a = array_of<std::int64_t>(
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
       26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39},
      {40}, dtype::int32);
  CHECK(am::to_string(a) == R"np([ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39])np");
  CHECK(am::repr(a) == R"np(array([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16,
       17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33,
       34, 35, 36, 37, 38, 39], dtype=int32))np");
}

TEST_CASE("host_array print: uint8 2-d", "[host_array_print]") {
  const host_array a = array_of<std::int64_t>({1, 2, 3, 255}, {2, 2}, dtype::uint8);
  CHECK(am::to_string(a) == R"np([[  1   2]
 [  3 255]])np");
  CHECK(am::repr(a) == R"np(array([[  1,   2],
       [  3, 255]], dtype=uint8))np");
}

TEST_CASE("host_array print: int64 extremes", "[host_array_print]") {
  const host_array a = array_of<std::int64_t>({INT64_MIN, 9223372036854775807, 0}, {3}, dtype::int64);
  CHECK(am::to_string(a) == R"np([-9223372036854775808  9223372036854775807                    0])np");
  CHECK(am::repr(a) == R"np(array([-9223372036854775808,  9223372036854775807,                    0]))np");
}

TEST_CASE("host_array print: int64 4-d", "[host_array_print]") {
  const host_array a = array_of<std::int64_t>(
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
      {2, 2, 2, 2}, dtype::int64);
  CHECK(am::to_string(a) == R"np([[[[ 0  1]
   [ 2  3]]

  [[ 4  5]
   [ 6  7]]]


 [[[ 8  9]
   [10 11]]

  [[12 13]
   [14 15]]]])np");
  CHECK(am::repr(a) == R"np(array([[[[ 0,  1],
         [ 2,  3]],

        [[ 4,  5],
         [ 6,  7]]],


       [[[ 8,  9],
         [10, 11]],

        [[12, 13],
         [14, 15]]]]))np");
}

TEST_CASE("host_array print: bool", "[host_array_print]") {
  const host_array a = array_of<double>({1.0, 0.0}, {2}, dtype::bool_);
  CHECK(am::to_string(a) == R"np([ True False])np");
  CHECK(am::repr(a) == R"np(array([ True, False]))np");
}

TEST_CASE("host_array print: bool all true keeps the space", "[host_array_print]") {
  const host_array a = array_of<double>({1.0, 1.0, 0.0, 1.0}, {2, 2}, dtype::bool_);
  CHECK(am::to_string(a) == R"np([[ True  True]
 [False  True]])np");
  CHECK(am::repr(a) == R"np(array([[ True,  True],
       [False,  True]]))np");
}

TEST_CASE("host_array print: 0-d float64", "[host_array_print]") {
  const host_array a = array_of<double>({1.0}, {}, dtype::float64);
  CHECK(am::to_string(a) == R"np(1.0)np");
  CHECK(am::repr(a) == R"np(array(1.))np");
}

TEST_CASE("host_array print: 0-d float64 negative zero", "[host_array_print]") {
  const host_array a = array_of<double>({-0.0}, {}, dtype::float64);
  CHECK(am::to_string(a) == R"np(-0.0)np");
  CHECK(am::repr(a) == R"np(array(-0.))np");
}

TEST_CASE("host_array print: 0-d float64 large", "[host_array_print]") {
  const host_array a = array_of<double>({1e+16}, {}, dtype::float64);
  CHECK(am::to_string(a) == R"np(1e+16)np");
  CHECK(am::repr(a) == R"np(array(1.e+16))np");
}

TEST_CASE("host_array print: 0-d float64 below", "[host_array_print]") {
  const host_array a = array_of<double>({1000000000000000.0}, {}, dtype::float64);
  CHECK(am::to_string(a) == R"np(1000000000000000.0)np");
  CHECK(am::repr(a) == R"np(array(1.e+15))np");
}

TEST_CASE("host_array print: 0-d float64 small", "[host_array_print]") {
  const host_array a = array_of<double>({1.5e-05}, {}, dtype::float64);
  CHECK(am::to_string(a) == R"np(1.5e-05)np");
  CHECK(am::repr(a) == R"np(array(1.5e-05))np");
}

TEST_CASE("host_array print: 0-d float32", "[host_array_print]") {
  const host_array a = array_of<double>({1.0}, {}, dtype::float32);
  CHECK(am::to_string(a) == R"np(1.0)np");
  CHECK(am::repr(a) == R"np(array(1., dtype=float32))np");
}

TEST_CASE("host_array print: 0-d float32 past its cutoff", "[host_array_print]") {
  const host_array a = array_of<double>({10000000000.0}, {}, dtype::float32);
  CHECK(am::to_string(a) == R"np(1e+10)np");
  CHECK(am::repr(a) == R"np(array(1.e+10, dtype=float32))np");
}

TEST_CASE("host_array print: 0-d float32 0.0001", "[host_array_print]") {
  const host_array a = array_of<double>({9.999999747378752e-05}, {}, dtype::float32);
  CHECK(am::to_string(a) == R"np(1e-04)np");
  CHECK(am::repr(a) == R"np(array(0.0001, dtype=float32))np");
}

TEST_CASE("host_array print: 0-d float16", "[host_array_print]") {
  const host_array a = array_of<double>({0.0999755859375}, {}, dtype::float16);
  CHECK(am::to_string(a) == R"np(0.1)np");
  CHECK(am::repr(a) == R"np(array(0.1, dtype=float16))np");
}

TEST_CASE("host_array print: 0-d float16 max", "[host_array_print]") {
  const host_array a = array_of<double>({65504.0}, {}, dtype::float16);
  CHECK(am::to_string(a) == R"np(6.55e+04)np");
  CHECK(am::repr(a) == R"np(array(6.55e+04, dtype=float16))np");
}

TEST_CASE("host_array print: 0-d float16 -inf", "[host_array_print]") {
  const host_array a = array_of<double>({-INFINITY}, {}, dtype::float16);
  CHECK(am::to_string(a) == R"np(-inf)np");
  CHECK(am::repr(a) == R"np(array(-inf, dtype=float16))np");
}

TEST_CASE("host_array print: 0-d float32 nan", "[host_array_print]") {
  const host_array a = array_of<double>({NAN}, {}, dtype::float32);
  CHECK(am::to_string(a) == R"np(nan)np");
  CHECK(am::repr(a) == R"np(array(nan, dtype=float32))np");
}

TEST_CASE("host_array print: 0-d int32", "[host_array_print]") {
  const host_array a = array_of<std::int64_t>({3}, {}, dtype::int32);
  CHECK(am::to_string(a) == R"np(3)np");
  CHECK(am::repr(a) == R"np(array(3, dtype=int32))np");
}

TEST_CASE("host_array print: 0-d int64", "[host_array_print]") {
  const host_array a = array_of<std::int64_t>({-7}, {}, dtype::int64);
  CHECK(am::to_string(a) == R"np(-7)np");
  CHECK(am::repr(a) == R"np(array(-7))np");
}

TEST_CASE("host_array print: 0-d bool", "[host_array_print]") {
  const host_array a = array_of<double>({1.0}, {}, dtype::bool_);
  CHECK(am::to_string(a) == R"np(True)np");
  CHECK(am::repr(a) == R"np(array(True))np");
}

TEST_CASE("host_array print: 0-d bfloat16", "[host_array_print]") {
  const host_array a = array_of<double>({0.10009765625}, {}, dtype::bfloat16);
  CHECK(am::to_string(a) == R"np(0.100098)np");
  CHECK(am::repr(a) == R"np(array(0.100098, dtype=bfloat16))np");
}

TEST_CASE("host_array print: empty float64", "[host_array_print]") {
  const host_array a = array_of<double>({}, {0}, dtype::float64);
  CHECK(am::to_string(a) == R"np([])np");
  CHECK(am::repr(a) == R"np(array([], dtype=float64))np");
}

TEST_CASE("host_array print: empty 2-d float64", "[host_array_print]") {
  const host_array a = array_of<double>({}, {0, 3}, dtype::float64);
  CHECK(am::to_string(a) == R"np([])np");
  CHECK(am::repr(a) == R"np(array([], shape=(0, 3), dtype=float64))np");
}

TEST_CASE("host_array print: empty int32", "[host_array_print]") {
  const host_array a = array_of<std::int64_t>({}, {0}, dtype::int32);
  CHECK(am::to_string(a) == R"np([])np");
  CHECK(am::repr(a) == R"np(array([], dtype=int32))np");
}

TEST_CASE("host_array print: empty bool 2-d", "[host_array_print]") {
  const host_array a = array_of<double>({}, {2, 0}, dtype::bool_);
  CHECK(am::to_string(a) == R"np([])np");
  CHECK(am::repr(a) == R"np(array([], shape=(2, 0), dtype=bool))np");
}
