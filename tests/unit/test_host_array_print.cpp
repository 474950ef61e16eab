// Printing host arrays, floats: every expected string below is what numpy 2.4.6 (+ ml_dtypes 0.6.0 for
// bfloat16) prints for the same array with `str(a)` and `repr(a)`, generated once with python
// and pasted as data.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <vector>

#include "actormesh/sharding/host_array_print.hpp"

using am::dtype;
using am::host_array;

namespace {

// An array of `type` holding these values (converted as astype converts).
template <class T>
host_array make(std::vector<T> values, host_array::shape_type shape, dtype type) {
  return host_array::from_vector<T>(values, std::move(shape)).astype(type);
}

} // namespace

TEST_CASE("host_array print: operator<< writes the str form", "[host_array_print]") {
  std::ostringstream os;
  os << host_array::arange(3);
  CHECK(os.str() == "[0 1 2]");
}

TEST_CASE("host_array print: float64 2x2 (the brief's example)", "[host_array_print]") {
  const host_array a = make<double>({0.0, 1.0, 2.0, 3.0}, {2, 2}, dtype::float64);
  CHECK(am::to_string(a) == R"np([[0. 1.]
 [2. 3.]])np");
  CHECK(am::repr(a) == R"np(array([[0., 1.],
       [2., 3.]]))np");
}

TEST_CASE("host_array print: float32 arange wraps and puts dtype on its own line", "[host_array_print]") {
  const host_array a = make<double>(
      {0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896, 0.4000000059604645, 0.5,
       0.6000000238418579, 0.699999988079071, 0.800000011920929, 0.9000000357627869},
      {10}, dtype::float32);
  CHECK(am::to_string(a) == R"np([0.         0.1        0.2        0.3        0.4        0.5
 0.6        0.7        0.8        0.90000004])np");
  CHECK(am::repr(a) == R"np(array([0.        , 0.1       , 0.2       , 0.3       , 0.4       ,
       0.5       , 0.6       , 0.7       , 0.8       , 0.90000004],
      dtype=float32))np");
}

TEST_CASE("host_array print: float64 common width, unique digits", "[host_array_print]") {
  const host_array a = make<double>({1.5, 2.25, -0.5}, {3}, dtype::float64);
  CHECK(am::to_string(a) == R"np([ 1.5   2.25 -0.5 ])np");
  CHECK(am::repr(a) == R"np(array([ 1.5 ,  2.25, -0.5 ]))np");
}

TEST_CASE("host_array print: float64 scientific for a small value", "[host_array_print]") {
  const host_array a = make<double>({1e-05, 1.5}, {2}, dtype::float64);
  CHECK(am::to_string(a) == R"np([1.0e-05 1.5e+00])np");
  CHECK(am::repr(a) == R"np(array([1.0e-05, 1.5e+00]))np");
}

TEST_CASE("host_array print: float64 scientific integral values", "[host_array_print]") {
  const host_array a = make<double>({1e-05, 1.0}, {2}, dtype::float64);
  CHECK(am::to_string(a) == R"np([1.e-05 1.e+00])np");
  CHECK(am::repr(a) == R"np(array([1.e-05, 1.e+00]))np");
}

TEST_CASE("host_array print: float64 scientific from the 1e8 cutoff", "[host_array_print]") {
  const host_array a = make<double>({100000000.0, 150000000.0}, {2}, dtype::float64);
  CHECK(am::to_string(a) == R"np([1.0e+08 1.5e+08])np");
  CHECK(am::repr(a) == R"np(array([1.0e+08, 1.5e+08]))np");
}

TEST_CASE("host_array print: float64 positional below the cutoff", "[host_array_print]") {
  const host_array a = make<double>({99999999.5, 100000.0}, {2}, dtype::float64);
  CHECK(am::to_string(a) == R"np([99999999.5   100000. ])np");
  CHECK(am::repr(a) == R"np(array([99999999.5,   100000. ]))np");
}

TEST_CASE("host_array print: float64 ratio over 1000 gives scientific", "[host_array_print]") {
  const host_array a = make<double>({0.5, 501.0}, {2}, dtype::float64);
  CHECK(am::to_string(a) == R"np([5.00e-01 5.01e+02])np");
  CHECK(am::repr(a) == R"np(array([5.00e-01, 5.01e+02]))np");
}

TEST_CASE("host_array print: float64 non-finite values", "[host_array_print]") {
  const host_array a = make<double>({NAN, 1.5, -INFINITY}, {3}, dtype::float64);
  CHECK(am::to_string(a) == R"np([ nan  1.5 -inf])np");
  CHECK(am::repr(a) == R"np(array([ nan,  1.5, -inf]))np");
}

TEST_CASE("host_array print: float64 only non-finite", "[host_array_print]") {
  const host_array a = make<double>({NAN, INFINITY}, {2}, dtype::float64);
  CHECK(am::to_string(a) == R"np([nan inf])np");
  CHECK(am::repr(a) == R"np(array([nan, inf]))np");
}

TEST_CASE("host_array print: float64 nan next to scientific", "[host_array_print]") {
  const host_array a = make<double>({NAN, 1e-09, INFINITY}, {3}, dtype::float64);
  CHECK(am::to_string(a) == R"np([   nan 1.e-09    inf])np");
  CHECK(am::repr(a) == R"np(array([   nan, 1.e-09,    inf]))np");
}

TEST_CASE("host_array print: float64 signed zeros", "[host_array_print]") {
  const host_array a = make<double>({-0.0, 0.0, 1.0}, {3}, dtype::float64);
  CHECK(am::to_string(a) == R"np([-0.  0.  1.])np");
  CHECK(am::repr(a) == R"np(array([-0.,  0.,  1.]))np");
}

TEST_CASE("host_array print: float64 rounded to 8 digits", "[host_array_print]") {
  const host_array a = make<double>({0.30000000000000004, 0.3333333333333333}, {2}, dtype::float64);
  CHECK(am::to_string(a) == R"np([0.3        0.33333333])np");
  CHECK(am::repr(a) == R"np(array([0.3       , 0.33333333]))np");
}

TEST_CASE("host_array print: float64 huge range", "[host_array_print]") {
  const host_array a = make<double>({1e-300, 1e+300}, {2}, dtype::float64);
  CHECK(am::to_string(a) == R"np([1.e-300 1.e+300])np");
  CHECK(am::repr(a) == R"np(array([1.e-300, 1.e+300]))np");
}

TEST_CASE("host_array print: float64 linspace(0, 1, 30)", "[host_array_print]") {
  const host_array a = make<double>(
      {0.0, 0.034482758620689655, 0.06896551724137931, 0.10344827586206896, 0.13793103448275862,
       0.1724137931034483, 0.20689655172413793, 0.24137931034482757, 0.27586206896551724,
       0.3103448275862069, 0.3448275862068966, 0.3793103448275862, 0.41379310344827586,
       0.4482758620689655, 0.48275862068965514, 0.5172413793103449, 0.5517241379310345,
       0.5862068965517241, 0.6206896551724138, 0.6551724137931034, 0.6896551724137931,
       0.7241379310344828, 0.7586206896551724, 0.7931034482758621, 0.8275862068965517,
       0.8620689655172413, 0.896551724137931, 0.9310344827586207, 0.9655172413793103, 1.0},
      {30}, dtype::float64);
  CHECK(am::to_string(a) == R"np([0.         0.03448276 0.06896552 0.10344828 0.13793103 0.17241379
 0.20689655 0.24137931 0.27586207 0.31034483 0.34482759 0.37931034
 0.4137931  0.44827586 0.48275862 0.51724138 0.55172414 0.5862069
 0.62068966 0.65517241 0.68965517 0.72413793 0.75862069 0.79310345
 0.82758621 0.86206897 0.89655172 0.93103448 0.96551724 1.        ])np");
  CHECK(am::repr(a) == R"np(array([0.        , 0.03448276, 0.06896552, 0.10344828, 0.13793103,
       0.17241379, 0.20689655, 0.24137931, 0.27586207, 0.31034483,
       0.34482759, 0.37931034, 0.4137931 , 0.44827586, 0.48275862,
       0.51724138, 0.55172414, 0.5862069 , 0.62068966, 0.65517241,
       0.68965517, 0.72413793, 0.75862069, 0.79310345, 0.82758621,
       0.86206897, 0.89655172, 0.93103448, 0.96551724, 1.        ]))np");
}

TEST_CASE("host_array print: float64 2-d rows wrap", "[host_array_print]") {
  const host_array a = make<double>(
      {0.0, 1.5, 3.0, 4.5, 6.0, 7.5, 9.0, 10.5, 12.0, 13.5, 15.0, 16.5, 18.0, 19.5, 21.0, 22.5, 24.0,
       25.5, 27.0, 28.5, 30.0, 31.5, 33.0, 34.5, 36.0, 37.5, 39.0, 40.5, 42.0, 43.5, 45.0, 46.5, 48.0,
       49.5, 51.0, 52.5, 54.0, 55.5, 57.0, 58.5, 60.0, 61.5, 63.0, 64.5, 66.0, 67.5, 69.0, 70.5, 72.0,
       73.5, 75.0, 76.5, 78.0, 79.5, 81.0, 82.5, 84.0, 85.5, 87.0, 88.5},
      {3, 20}, dtype::float64);
  CHECK(am::to_string(a) == R"np([[ 0.   1.5  3.   4.5  6.   7.5  9.  10.5 12.  13.5 15.  16.5 18.  19.5
  21.  22.5 24.  25.5 27.  28.5]
 [30.  31.5 33.  34.5 36.  37.5 39.  40.5 42.  43.5 45.  46.5 48.  49.5
  51.  52.5 54.  55.5 57.  58.5]
 [60.  61.5 63.  64.5 66.  67.5 69.  70.5 72.  73.5 75.  76.5 78.  79.5
  81.  82.5 84.  85.5 87.  88.5]])np");
  CHECK(am::repr(a) == R"np(array([[ 0. ,  1.5,  3. ,  4.5,  6. ,  7.5,  9. , 10.5, 12. , 13.5, 15. ,
        16.5, 18. , 19.5, 21. , 22.5, 24. , 25.5, 27. , 28.5],
       [30. , 31.5, 33. , 34.5, 36. , 37.5, 39. , 40.5, 42. , 43.5, 45. ,
        46.5, 48. , 49.5, 51. , 52.5, 54. , 55.5, 57. , 58.5],
       [60. , 61.5, 63. , 64.5, 66. , 67.5, 69. , 70.5, 72. , 73.5, 75. ,
        76.5, 78. , 79.5, 81. , 82.5, 84. , 85.5, 87. , 88.5]]))np");
}

TEST_CASE("host_array print: float64 3-d", "[host_array_print]") {
  const host_array a = make<double>(
      {0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0, 1.125, 1.25, 1.375, 1.5, 1.625, 1.75,
       1.875, 2.0, 2.125, 2.25, 2.375, 2.5, 2.625, 2.75, 2.875},
      {2, 3, 4}, dtype::float64);
  CHECK(am::to_string(a) == R"np([[[0.    0.125 0.25  0.375]
  [0.5   0.625 0.75  0.875]
  [1.    1.125 1.25  1.375]]

 [[1.5   1.625 1.75  1.875]
  [2.    2.125 2.25  2.375]
  [2.5   2.625 2.75  2.875]]])np");
  CHECK(am::repr(a) == R"np(array([[[0.   , 0.125, 0.25 , 0.375],
        [0.5  , 0.625, 0.75 , 0.875],
        [1.   , 1.125, 1.25 , 1.375]],

       [[1.5  , 1.625, 1.75 , 1.875],
        [2.   , 2.125, 2.25 , 2.375],
        [2.5  , 2.625, 2.75 , 2.875]]]))np");
}

TEST_CASE("host_array print: float32 shortest digits of float32", "[host_array_print]") {
  const host_array a = make<double>({0.10000000149011612, 0.20000000298023224, 16777216.0, 1.5}, {4}, dtype::float32);
  CHECK(am::to_string(a) == R"np([1.0000000e-01 2.0000000e-01 1.6777216e+07 1.5000000e+00])np");
  CHECK(am::repr(a) == R"np(array([1.0000000e-01, 2.0000000e-01, 1.6777216e+07, 1.5000000e+00],
      dtype=float32))np");
}

TEST_CASE("host_array print: float32 exact digits past the shortest in scientific", "[host_array_print]") {
  const host_array a = make<double>({123456.78125, 1.5, 2.838852946571998e-32}, {3}, dtype::float32);
  CHECK(am::to_string(a) == R"np([1.2345678e+05 1.5000000e+00 2.8388529e-32])np");
  CHECK(am::repr(a) == R"np(array([1.2345678e+05, 1.5000000e+00, 2.8388529e-32], dtype=float32))np");
}

TEST_CASE("host_array print: float32 1e-4 compared in float32", "[host_array_print]") {
  const host_array a = make<double>({9.999999747378752e-05}, {1}, dtype::float32);
  CHECK(am::to_string(a) == R"np([0.0001])np");
  CHECK(am::repr(a) == R"np(array([0.0001], dtype=float32))np");
}

TEST_CASE("host_array print: float32 1e6 cutoff", "[host_array_print]") {
  const host_array a = make<double>({1000000.0, 2000000.0}, {2}, dtype::float32);
  CHECK(am::to_string(a) == R"np([1.e+06 2.e+06])np");
  CHECK(am::repr(a) == R"np(array([1.e+06, 2.e+06], dtype=float32))np");
}

TEST_CASE("host_array print: float32 below the cutoff", "[host_array_print]") {
  const host_array a = make<double>({999999.5, 2000.0}, {2}, dtype::float32);
  CHECK(am::to_string(a) == R"np([999999.5   2000. ])np");
  CHECK(am::repr(a) == R"np(array([999999.5,   2000. ], dtype=float32))np");
}

TEST_CASE("host_array print: float16 values", "[host_array_print]") {
  const host_array a = make<double>(
      {0.0, 0.300048828125, 0.60009765625, 0.900390625, 1.2001953125, 1.5, 1.80078125, 2.099609375,
       2.400390625, 2.701171875},
      {10}, dtype::float16);
  CHECK(am::to_string(a) == R"np([0.     0.3    0.6    0.9004 1.2    1.5    1.801  2.1    2.4    2.701 ])np");
  CHECK(am::repr(a) == R"np(array([0.    , 0.3   , 0.6   , 0.9004, 1.2   , 1.5   , 1.801 , 2.1   ,
       2.4   , 2.701 ], dtype=float16))np");
}

TEST_CASE("host_array print: float16 1e3 cutoff", "[host_array_print]") {
  const host_array a = make<double>({1000.0, 1500.0}, {2}, dtype::float16);
  CHECK(am::to_string(a) == R"np([1.0e+03 1.5e+03])np");
  CHECK(am::repr(a) == R"np(array([1.0e+03, 1.5e+03], dtype=float16))np");
}

TEST_CASE("host_array print: float16 below the cutoff", "[host_array_print]") {
  const host_array a = make<double>({999.0, 1.0}, {2}, dtype::float16);
  CHECK(am::to_string(a) == R"np([999.   1.])np");
  CHECK(am::repr(a) == R"np(array([999.,   1.], dtype=float16))np");
}

TEST_CASE("host_array print: float16 digits beyond the shortest", "[host_array_print]") {
  const host_array a = make<double>({0.0009551048278808594, 45.5, -15.8671875, 7484.0}, {4}, dtype::float16);
  CHECK(am::to_string(a) == R"np([ 9.551e-04  4.550e+01 -1.587e+01  7.484e+03])np");
  CHECK(am::repr(a) == R"np(array([ 9.551e-04,  4.550e+01, -1.587e+01,  7.484e+03], dtype=float16))np");
}

TEST_CASE("host_array print: bfloat16 like ml_dtypes", "[host_array_print]") {
  const host_array a = make<double>({1.0, 2.5, 0.10009765625, 9999220736.0, -3.0}, {5}, dtype::bfloat16);
  CHECK(am::to_string(a) == R"np([1 2.5 0.100098 9.99922e+09 -3])np");
  CHECK(am::repr(a) == R"np(array([1, 2.5, 0.100098, 9.99922e+09, -3], dtype=bfloat16))np");
}

TEST_CASE("host_array print: bfloat16 2-d", "[host_array_print]") {
  const host_array a = make<double>(
      {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0},
      {3, 4}, dtype::bfloat16);
  CHECK(am::to_string(a) == R"np([[0 1 2 3]
 [4 5 6 7]
 [8 9 10 11]])np");
  CHECK(am::repr(a) == R"np(array([[0, 1, 2, 3],
       [4, 5, 6, 7],
       [8, 9, 10, 11]], dtype=bfloat16))np");
}

TEST_CASE("host_array print: bfloat16 non-finite", "[host_array_print]") {
  const host_array a = make<double>({NAN, INFINITY, -INFINITY, 1.0011717677116394e-08, 123392.0}, {5}, dtype::bfloat16);
  CHECK(am::to_string(a) == R"np([nan inf -inf 1.00117e-08 123392])np");
  CHECK(am::repr(a) == R"np(array([nan, inf, -inf, 1.00117e-08, 123392], dtype=bfloat16))np");
}
