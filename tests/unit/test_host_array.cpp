// am::host_array: creation, element access, shape operations, casting and comparison, with expected
// values and error texts taken from numpy 2.4.6 (+ ml_dtypes 0.6.0 for bfloat16).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "actormesh/sharding/host_array.hpp"

using am::dtype;
using am::host_array;
using shape = host_array::shape_type;

namespace {

template <class T>
std::vector<T> values(const host_array& a) {
  return a.to_vector<T>();
}

std::vector<std::uint32_t> float_bits(const host_array& a) {
  std::vector<std::uint32_t> out;
  for (const float f : a.to_vector<float>()) out.push_back(std::bit_cast<std::uint32_t>(f));
  return out;
}

template <class half>
std::vector<std::uint16_t> half_bits(const host_array& a) {
  std::vector<std::uint16_t> out;
  for (const half h : a.to_vector<half>()) out.push_back(h.bits());
  return out;
}

} // namespace

TEST_CASE("host_array: creation: zeros, ones, full, empty, scalar, default", "[host_array]") {
  const host_array z = host_array::zeros({2, 3}, dtype::float32);
  CHECK(z.shape() == shape{2, 3});
  CHECK(z.dtype() == dtype::float32);
  CHECK(z.ndim() == 2);
  CHECK(z.size() == 6);
  CHECK(z.nbytes() == 24);
  CHECK(values<float>(z) == std::vector<float>(6, 0.0f));
  CHECK(values<double>(host_array::ones({4}, dtype::bfloat16)) == std::vector<double>(4, 1.0));
  CHECK(half_bits<am::float16>(host_array::ones({2}, dtype::float16)) == std::vector<std::uint16_t>{0x3c00, 0x3c00});
  CHECK(values<bool>(host_array::ones({2}, dtype::bool_)) == std::vector<bool>{true, true});
  const host_array f = host_array::full({2, 2}, 7.5);
  CHECK(f.dtype() == dtype::float64);
  CHECK(values<double>(f) == std::vector<double>(4, 7.5));
  CHECK(host_array::full({3}, std::int64_t{5}).dtype() == dtype::int64);
  CHECK(values<std::int32_t>(host_array::full({2}, 300.7, dtype::uint8)) == std::vector<std::int32_t>{44, 44});
  CHECK(host_array::empty({5, 0}, dtype::int32).size() == 0);
  const host_array s = host_array::scalar(2.5f);
  CHECK(s.ndim() == 0);
  CHECK(s.size() == 1);
  CHECK(s.item<double>() == 2.5);
  const host_array d;
  CHECK(d.shape() == shape{0});
  CHECK(d.dtype() == dtype::float64);
  CHECK_THROWS_WITH(host_array::zeros({2, -1}), "negative dimensions are not allowed");
}

TEST_CASE("host_array: arange computes like numpy, in the result dtype", "[host_array]") {
  CHECK(values<std::int64_t>(host_array::arange(5)) == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  CHECK(host_array::arange(5).dtype() == dtype::int64);
  CHECK(values<double>(host_array::arange(0, 1, 0.1, dtype::float64)) ==
        std::vector<double>{0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001, 0.7000000000000001,
                            0.8, 0.9});
  CHECK(float_bits(host_array::arange(0, 1, 0.1, dtype::float32)) ==
        std::vector<std::uint32_t>{0x0, 0x3dcccccd, 0x3e4ccccd, 0x3e99999a, 0x3ecccccd, 0x3f000000, 0x3f19999a,
                                   0x3f333333, 0x3f4ccccd, 0x3f666667});
  const host_array long_f32 = host_array::arange(-1, 1e6, 12345.678, dtype::float32);
  REQUIRE(long_f32.size() == 82);
  const auto tail = float_bits(long_f32);
  CHECK(std::vector<std::uint32_t>(tail.end() - 3, tail.end()) ==
        std::vector<std::uint32_t>{0x496e1cb9, 0x49712054, 0x497423ee});
  CHECK(half_bits<am::float16>(host_array::arange(0, 3, 0.3, dtype::float16)) ==
        std::vector<std::uint16_t>{0x0, 0x34cd, 0x38cd, 0x3b34, 0x3ccd, 0x3e00, 0x3f34, 0x4033, 0x40cd, 0x4167});
  CHECK(half_bits<am::bfloat16>(host_array::arange(1, 2, 0.1, dtype::bfloat16)) ==
        std::vector<std::uint16_t>{0x3f80, 0x3f8d, 0x3f9a, 0x3fa7, 0x3fb4, 0x3fc1, 0x3fce, 0x3fdb, 0x3fe8, 0x3ff5});
  CHECK(values<std::int64_t>(host_array::arange(0.5, 5, 1, dtype::int32)) == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  CHECK(values<std::int64_t>(host_array::arange(2.5, -3, -1.5, dtype::int64)) ==
        std::vector<std::int64_t>{2, 1, 0, -1});
  CHECK(values<double>(host_array::arange(5, 0, -1.5, dtype::float64)) == std::vector<double>{5, 3.5, 2, 0.5});
  CHECK(values<bool>(host_array::arange(0, 2, 1, dtype::bool_)) == std::vector<bool>{false, true});
  CHECK(host_array::arange(10, 0, 1, dtype::int64).shape() == shape{0});
  CHECK_THROWS_WITH(host_array::arange(0, 5, 0, dtype::int64), "division by zero");
  CHECK_THROWS_WITH(host_array::arange(0, 3, 1, dtype::bool_),
                    "arange() is only supported for booleans when the result has at most length 2.");
}

TEST_CASE("host_array: from_vector, data, at, get, set, item and to_vector", "[host_array]") {
  host_array a = host_array::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(a.at<float>({1, 2}) == 6.0f);
  CHECK(a.at<float>({-1, -3}) == 4.0f);
  a.at<float>({0, 1}) = 20.0f;
  CHECK(a.data<float>()[1] == 20.0f);
  CHECK(a.get<std::int32_t>({0, 1}) == 20);
  a.set({1, 0}, 2.9);  // converted to float32
  CHECK(a.at<float>({1, 0}) == 2.9f);
  CHECK(values<std::int64_t>(a) == std::vector<std::int64_t>{1, 20, 3, 2, 5, 6});
  CHECK_THROWS_WITH(a.data<double>(), "host_array holds float32 elements, not float64");
  CHECK_THROWS_AS(a.at<std::int32_t>({0, 0}), am::type_error);
  CHECK_THROWS_WITH(a.at<float>({2, 0}), "index 2 is out of bounds for axis 0 with size 2");
  CHECK_THROWS_WITH(a.at<float>({0, -4}), "index -4 is out of bounds for axis 1 with size 3");
  CHECK_THROWS_WITH(a.at<float>({0, 0, 0}), "too many indices for array: array is 2-dimensional, but 3 were indexed");
  CHECK_THROWS_AS(a.at<float>({0}), am::value_error);
  CHECK_THROWS_WITH(a.item<float>(), "can only convert an array of size 1 to a Python scalar");
  CHECK_THROWS_WITH(host_array::from_vector<double>({1, 2, 3}, {2, 2}),
                    "cannot reshape array of size 3 into shape (2,2)");
  const host_array b = host_array::from_vector<bool>({true, false, true});
  CHECK(b.dtype() == dtype::bool_);
  CHECK(values<bool>(b) == std::vector<bool>{true, false, true});
  CHECK(values<float>(b) == std::vector<float>{1, 0, 1});
  CHECK(host_array::from_vector<std::uint8_t>({1, 2}).dtype() == dtype::uint8);
  CHECK(host_array::from_vector<long long>({1, 2}).dtype() == dtype::int64);
  const host_array h = host_array::from_vector<am::float16>({am::float16(0.5), am::float16(-2.0)});
  CHECK(values<double>(h) == std::vector<double>{0.5, -2.0});
}

TEST_CASE("host_array: copies share, copy() does not, indexing by row views a row", "[host_array]") {
  host_array a = host_array::arange(0, 6, 1, dtype::int32).reshape({2, 3});
  host_array shared = a;
  host_array deep = a.copy();
  shared.at<std::int32_t>({0, 0}) = 100;
  CHECK(a.at<std::int32_t>({0, 0}) == 100);
  CHECK(deep.at<std::int32_t>({0, 0}) == 0);
  CHECK(shared.shares_memory_with(a));
  CHECK_FALSE(deep.shares_memory_with(a));
  CHECK(am::array_identical(deep.reshape({6}), host_array::arange(0, 6, 1, dtype::int32)));
  const host_array row = a[1];
  CHECK(row.shape() == shape{3});
  CHECK(values<std::int64_t>(row) == std::vector<std::int64_t>{3, 4, 5});
  row.at<std::int32_t>({0}) = -3;
  CHECK(a.at<std::int32_t>({1, 0}) == -3);
  CHECK(row.shares_memory_with(a));
  CHECK(a[-1][-1].item<int>() == 5);
  CHECK(a[0][2].ndim() == 0);
  CHECK_THROWS_WITH(a[2], "index 2 is out of bounds for axis 0 with size 2");
  CHECK_THROWS_WITH(host_array::scalar(1.0)[0],
                    "too many indices for array: array is 0-dimensional, but 1 were indexed");
}

TEST_CASE("host_array: byte views and hand-over without copies", "[host_array]") {
  auto buffer = std::shared_ptr<std::byte>(new std::byte[16], std::default_delete<std::byte[]>());
  const host_array a = host_array::from_shared_bytes(buffer, 16, dtype::float32, {2, 2});
  a.data<float>()[3] = 1.5f;
  CHECK(reinterpret_cast<float*>(buffer.get())[3] == 1.5f);
  CHECK(a.shared_bytes().get() == buffer.get());
  CHECK_THROWS_AS(host_array::from_shared_bytes(buffer, 16, dtype::float64, {2, 2}), am::value_error);
  const host_array b = host_array::from_bytes(a.bytes(), dtype::int32, {4});
  CHECK_FALSE(b.shares_memory_with(a));
  CHECK(b.at<std::int32_t>({3}) == std::bit_cast<std::int32_t>(1.5f));
  CHECK_THROWS_AS(host_array::from_bytes(a.bytes(), dtype::int32, {3}), am::value_error);
  // bool elements are bytes: any nonzero byte reads as true
  const std::byte raw[3] = {std::byte{0}, std::byte{2}, std::byte{1}};
  const host_array flags = host_array::from_bytes(raw, dtype::bool_, {3});
  CHECK(values<bool>(flags) == std::vector<bool>{false, true, true});
  CHECK(values<std::int32_t>(flags) == std::vector<std::int32_t>{0, 1, 1});
}

TEST_CASE("host_array: reshape infers -1 and words errors like numpy", "[host_array]") {
  const host_array a = host_array::arange(12);
  CHECK(a.reshape({3, -1}).shape() == shape{3, 4});
  CHECK(a.reshape({2, -1, 3}).shape() == shape{2, 2, 3});
  CHECK(a.reshape({-1}).shape() == shape{12});
  CHECK(a.reshape({3, 4}).shares_memory_with(a));
  CHECK(host_array::arange(1).reshape({}).ndim() == 0);
  CHECK_THROWS_WITH(a.reshape({5}), "cannot reshape array of size 12 into shape (5,)");
  CHECK_THROWS_WITH(a.reshape({5, -1}), "cannot reshape array of size 12 into shape (5,newaxis)");
  CHECK_THROWS_WITH(a.reshape({-1, 5}), "cannot reshape array of size 12 into shape (5)");
  CHECK_THROWS_WITH(a.reshape({2, 2, 2}), "cannot reshape array of size 12 into shape (2,2,2)");
  CHECK_THROWS_WITH(a.reshape({}), "cannot reshape array of size 12 into shape ()");
  CHECK_THROWS_WITH(a.reshape({-1, -1}), "can only specify one unknown dimension");
  CHECK_THROWS_WITH(host_array::arange(0).reshape({0, -1}), "cannot reshape array of size 0 into shape (0,newaxis)");
}

TEST_CASE("host_array: transpose permutes axes like numpy", "[host_array]") {
  const host_array a = host_array::arange(24).reshape({2, 3, 4});
  CHECK(a.transpose().shape() == shape{4, 3, 2});
  CHECK(values<std::int64_t>(a.transpose()) ==
        std::vector<std::int64_t>{0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21,  //
                                  2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23});
  CHECK(values<std::int64_t>(a.transpose({1, 0, 2})) ==
        std::vector<std::int64_t>{0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7,  //
                                  16, 17, 18, 19, 8, 9, 10, 11, 20, 21, 22, 23});
  CHECK(values<std::int64_t>(a.transpose({-1, 0, 1})) ==
        std::vector<std::int64_t>{0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21,  //
                                  2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});
  CHECK(am::array_equal(a.transpose().transpose(), a));
  CHECK_FALSE(a.transpose().shares_memory_with(a));
  const host_array m = host_array::zeros({2, 3});
  CHECK_THROWS_WITH(m.transpose({0, 0}), "repeated axis in transpose");
  CHECK_THROWS_WITH(m.transpose({0}), "axes don't match array");
  CHECK_THROWS_WITH(m.transpose({0, 2}), "axis 2 is out of bounds for array of dimension 2");
  CHECK(host_array::scalar(3).transpose().item<int>() == 3);
}

TEST_CASE("host_array: slice takes start:stop:step per dimension like Python", "[host_array]") {
  using s = host_array::slice_spec;
  const host_array a = host_array::arange(24).reshape({2, 3, 4});
  // a[:, ::-1, 1:3]
  const host_array b = a.slice({s{}, s{{}, {}, -1}, s{1, 3}});
  CHECK(b.shape() == shape{2, 3, 2});
  CHECK(values<std::int64_t>(b) == std::vector<std::int64_t>{9, 10, 5, 6, 1, 2, 21, 22, 17, 18, 13, 14});
  // a[..., ::-2]
  CHECK(values<std::int64_t>(a.slice({s{}, s{}, s{.step = -2}})) ==
        std::vector<std::int64_t>{3, 1, 7, 5, 11, 9, 15, 13, 19, 17, 23, 21});
  // a[-5:10, -2:, -1:-4:-1]
  CHECK(values<std::int64_t>(a.slice({s{-5, 10}, s{-2}, s{-1, -4, -1}})) ==
        std::vector<std::int64_t>{7, 6, 5, 11, 10, 9, 19, 18, 17, 23, 22, 21});
  // out-of-range bounds are clamped as Python clamps them, by the step's direction
  const host_array x = host_array::arange(5);
  CHECK(x.slice({s{-10, {}, -1}}).size() == 0);
  CHECK(values<std::int64_t>(x.slice({s{3, -10, -1}})) == std::vector<std::int64_t>{3, 2, 1, 0});
  CHECK(values<std::int64_t>(x.slice({s{10, 1, -2}})) == std::vector<std::int64_t>{4, 2});
  CHECK(values<std::int64_t>(x.slice({s{{}, 10, 3}})) == std::vector<std::int64_t>{0, 3});
  CHECK(values<std::int64_t>(x.slice({s{-2}})) == std::vector<std::int64_t>{3, 4});
  CHECK(x.slice({s{{}, -7}}).size() == 0);
  CHECK(x.slice({s{7}}).size() == 0);
  CHECK(a.slice({s{1, 1}}).shape() == shape{0, 3, 4});
  CHECK(a.slice({s{}, s{3, 1}}).shape() == shape{2, 0, 4});
  CHECK(a.slice({s{1}}).shape() == shape{1, 3, 4});  // trailing dimensions taken whole
  CHECK_THROWS_WITH(a.slice({s{.step = 0}}), "slice step cannot be zero");
  CHECK_THROWS_WITH(a.slice({s{}, s{}, s{}, s{}}),
                    "too many indices for array: array is 3-dimensional, but 4 were indexed");
  // the result is a copy
  const host_array c = a.slice({s{}});
  CHECK_FALSE(c.shares_memory_with(a));
  CHECK(am::array_identical(c, a));
}

TEST_CASE("host_array: broadcasting follows numpy's rule and words", "[host_array]") {
  const host_array col = host_array::arange(3).reshape({3, 1});
  const host_array b = col.broadcast_to({2, 3, 4});
  CHECK(values<std::int64_t>(b) ==
        std::vector<std::int64_t>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2});
  CHECK(values<double>(host_array::scalar(1.5).broadcast_to({2})) == std::vector<double>{1.5, 1.5});
  CHECK(host_array::broadcast_shapes({2, 3}, {3}) == shape{2, 3});
  CHECK(host_array::broadcast_shapes({4, 1, 3}, {5, 1}) == shape{4, 5, 3});
  CHECK(host_array::broadcast_shapes({}, {0, 2}) == shape{0, 2});
  CHECK(host_array::broadcast_shapes({1, 0}, {3, 1}) == shape{3, 0});
  CHECK_THROWS_WITH(host_array::broadcast_shapes({2, 3}, {4}),
                    "operands could not be broadcast together with shapes (2,3) (4,) ");
  CHECK_THROWS_WITH(host_array::broadcast_shapes({2, 3}, {4, 5, 6}),
                    "operands could not be broadcast together with shapes (2,3) (4,5,6) ");
  CHECK_THROWS_WITH(host_array::zeros({3}).broadcast_to({4}),
                    "operands could not be broadcast together with remapped shapes [original->remapped]: (3,)  "
                    "and requested shape (4,)");
  CHECK_THROWS_WITH(host_array::zeros({2, 3}).broadcast_to({3}),
                    "input operand has more dimensions than allowed by the axis remapping");
  CHECK_THROWS_WITH(host_array::zeros({3}).broadcast_to({-1, 3}),
                    "all elements of broadcast shape must be non-negative");
}

TEST_CASE("host_array: astype converts with numpy's semantics", "[host_array]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const host_array f = host_array::from_vector<double>({nan, inf, -inf, 300.7, -1.7, -300.2, 1e20, 255.9, 256.0});
  CHECK(values<std::int64_t>(f.astype(dtype::uint8)) == std::vector<std::int64_t>{0, 0, 0, 44, 255, 212, 0, 255, 0});
  CHECK(f.astype(dtype::uint8).dtype() == dtype::uint8);
  const std::int64_t m32 = std::numeric_limits<std::int32_t>::min();
  CHECK(values<std::int64_t>(f.astype(dtype::int32)) ==
        std::vector<std::int64_t>{m32, m32, m32, 300, -1, -300, m32, 255, 256});
  CHECK(values<bool>(host_array::from_vector<double>({nan, 0.0, -0.0, 0.1}).astype(dtype::bool_)) ==
        std::vector<bool>{true, false, false, true});
  CHECK(values<std::int64_t>(host_array::from_vector<std::int64_t>({300, -1, 2147483653, -1099511627779})
                                 .astype(dtype::uint8)) == std::vector<std::int64_t>{44, 255, 5, 253});
  const host_array h = host_array::from_vector<double>({0.1, 65520.0, -2.5}).astype(dtype::float16);
  CHECK(half_bits<am::float16>(h) == std::vector<std::uint16_t>{0x2e66, 0x7c00, 0xc100});
  CHECK(half_bits<am::bfloat16>(h.astype(dtype::bfloat16)) == std::vector<std::uint16_t>{0x3dcd, 0x7f80, 0xc020});
  const host_array same = f.astype(dtype::float64);
  CHECK_FALSE(same.shares_memory_with(f));
  CHECK(am::array_equal(same, f, true));
}

TEST_CASE("host_array: array_equal, array_identical and allclose", "[host_array]") {
  const host_array a = host_array::from_vector<double>({1, 2, 3});
  CHECK(am::array_equal(a, host_array::from_vector<std::int32_t>({1, 2, 3})));
  CHECK_FALSE(am::array_identical(a, host_array::from_vector<std::int32_t>({1, 2, 3})));
  CHECK_FALSE(am::array_equal(a, host_array::from_vector<double>({1, 2, 4})));
  CHECK_FALSE(am::array_equal(a, a.reshape({1, 3})));
  const host_array n = host_array::from_vector<double>({1, NAN});
  CHECK_FALSE(am::array_equal(n, n));
  CHECK(am::array_equal(n, n, true));
  CHECK(am::array_equal(host_array::from_vector<std::int64_t>({9007199254740993}),
                        host_array::from_vector<std::int64_t>({9007199254740993})));
  CHECK_FALSE(am::array_equal(host_array::from_vector<std::int64_t>({9007199254740993}),
                              host_array::from_vector<std::int64_t>({9007199254740992})));
  CHECK(am::allclose(a, host_array::from_vector<float>({1.000001f, 2, 3})));
  CHECK_FALSE(am::allclose(a, host_array::from_vector<float>({1.001f, 2, 3})));
  CHECK(am::allclose(host_array::zeros({2, 3}), host_array::scalar(1e-9)));
  CHECK(am::allclose(host_array::from_vector<double>({INFINITY}), host_array::from_vector<double>({INFINITY})));
  CHECK_FALSE(am::allclose(host_array::from_vector<double>({INFINITY}), host_array::from_vector<double>({-INFINITY})));
  CHECK_FALSE(am::allclose(n, n));
  CHECK(am::allclose(n, n, 1e-5, 1e-8, true));
  CHECK_THROWS_AS(am::allclose(a, host_array::zeros({2})), am::value_error);
}

TEST_CASE("host_array: shape_to_string writes Python tuples", "[host_array]") {
  CHECK(am::shape_to_string({}) == "()");
  CHECK(am::shape_to_string({4}) == "(4,)");
  CHECK(am::shape_to_string({2, 3}) == "(2, 3)");
}
