// Every product of sizes is checked: element and byte counts, buffers, meshes, reshape targets and the
// shape and mesh parsers refuse negative extents and products past int64 with am::value_error, where
// they used to wrap around.
#include "support/arrays.hpp"

#include <catch2/catch.hpp>

#include <limits>

using namespace am;
using namespace am::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::Message;

namespace {

constexpr std::int64_t two_32 = std::int64_t{1} << 32;
// 761496548840 * 48448661 = 2^64 + 8: the product wraps to 8 in int64 arithmetic.
constexpr std::int64_t wraps_a = 761496548840;
constexpr std::int64_t wraps_b = 48448661;
// 16 * (2^60 + 1) = 2^64 + 16: wraps to 16.
constexpr std::int64_t wraps_16 = (std::int64_t{1} << 60) + 1;

// A buffer kind with no memory, to construct buffers of any shape.
struct layout_only_buffer final : buffer {
  using buffer::buffer;
  void* data() noexcept override { return nullptr; }
  bool host_accessible() const noexcept override { return true; }
};

} // namespace

TEST_CASE("checked_mul and try_element_count report overflow instead of wrapping", "[sizes]") {
  CHECK(checked_mul(3, 4) == 12);
  CHECK_FALSE(checked_mul(two_32, two_32));
  CHECK_FALSE(checked_mul(std::numeric_limits<std::int64_t>::min(), -1));
  CHECK(try_element_count(shape_t{}) == 1);
  CHECK(try_element_count(shape_t{4, 0, two_32, two_32}) == 0);
  CHECK_FALSE(try_element_count(shape_t{two_32, two_32}));
  CHECK_FALSE(try_element_count(shape_t{wraps_a, wraps_b}));
  CHECK_FALSE(try_element_count(shape_t{2, -3}));
}

TEST_CASE("element_count refuses products past int64 and negative extents", "[sizes]") {
  CHECK(element_count({8, 2}) == 16);
  CHECK_THROWS_MATCHES(element_count({two_32, two_32}), value_error,
                       Message("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
                               "possible size (shape (4294967296, 4294967296))"));
  CHECK_THROWS_AS(element_count({wraps_a, wraps_b}), value_error);
  CHECK_THROWS_MATCHES(element_count({2, -3}), value_error, Message("negative dimensions are not allowed"));
}

TEST_CASE("byte sizes are checked, also when the element count fits", "[sizes]") {
  CHECK(byte_size({8, 2}, dtype::float64) == 128);
  const shape_t elements_fit{std::int64_t{1} << 62};
  CHECK_THROWS_MATCHES(byte_size(elements_fit, dtype::float64), value_error,
                       Message("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
                               "possible size (shape (4611686018427387904,), dtype float64)"));
}

TEST_CASE("a buffer whose byte size overflows cannot be made", "[sizes]") {
  layout_only_buffer ok(dtype::float32, {8, 2}, 0);
  CHECK(ok.size() == 16);
  CHECK(ok.byte_size() == 64);
  CHECK_THROWS_AS(layout_only_buffer(dtype::float64, {std::int64_t{1} << 62}, 0), value_error);
  CHECK_THROWS_AS(layout_only_buffer(dtype::float32, {two_32, two_32}, 0), value_error);
  CHECK_THROWS_AS(layout_only_buffer(dtype::float32, {-1}, 0), value_error);
}

TEST_CASE("create_device_mesh compares the exact product, as JAX's Python integers do", "[sizes][mesh]") {
  CHECK_THROWS_MATCHES(create_device_mesh({two_32, two_32}, {}), value_error,
                       Message("Number of devices 0 must equal the product of mesh_shape (4294967296, 4294967296)"));
  CHECK_THROWS_MATCHES(create_device_mesh({wraps_a, wraps_b}, virtual_cpu_devices(8)), value_error,
                       Message("Number of devices 8 must equal the product of mesh_shape (761496548840, 48448661)"));
  CHECK_THROWS_AS(device_grid({two_32, two_32}, {}), value_error);
  CHECK_THROWS_AS(device_grid({wraps_a, wraps_b}, virtual_cpu_devices(8)), value_error);
}

TEST_CASE("reshaping a device grid checks the product of the known extents", "[sizes][mesh]") {
  const device_grid g(virtual_cpu_devices(8));
  CHECK_THROWS_AS(g.reshape({-1, wraps_a, wraps_b}), value_error);
  CHECK(g.reshape({-1, 2}).shape() == shape_t{4, 2});
}

TEST_CASE("the mesh-shape parser refuses meshes whose device count overflows", "[sizes][mesh]") {
  CHECK(parse_mesh_shape("4x2") == shape_t{4, 2});
  CHECK_THROWS_MATCHES(parse_mesh_shape("4294967296x4294967296"), value_error,
                       Message("Invalid mesh shape '4294967296x4294967296': the mesh would have more than "
                               "9223372036854775807 devices; write positive axis sizes separated by 'x', like 4x2"));
  CHECK_THROWS_AS(parse_mesh_shape("761496548840x48448661"), value_error);
  CHECK_THROWS_WITH(parse_mesh_shape("99999999999999999999"), Contains("is larger than 9223372036854775807"));
  CHECK_THROWS_WITH(parse_mesh_shape("4x0"), Contains("axis 1 has size 0"));
  CHECK_THROWS_WITH(parse_mesh_shape("4xx2"), Contains("entry 2 is empty"));
}

TEST_CASE("the shape parser refuses empty entries, signs and numbers past int64", "[sizes]") {
  CHECK(parse_shape("8192,8192") == shape_t{8192, 8192});
  CHECK(parse_shape("0") == shape_t{0});
  CHECK(parse_shape("").empty());
  CHECK_THROWS_MATCHES(parse_shape("8,,2"), value_error,
                       Message("Invalid shape '8,,2': entry 2 is empty; write non-negative integers separated by "
                               "',', like 8192,8192"));
  CHECK_THROWS_WITH(parse_shape("8,2,"), Contains("entry 3 is empty"));
  CHECK_THROWS_WITH(parse_shape("9223372036854775808"), Contains("is larger than 9223372036854775807"));
  CHECK(parse_shape("9223372036854775807") == shape_t{std::numeric_limits<std::int64_t>::max()});
  CHECK_THROWS_WITH(parse_shape("-1,2"), Contains("('-1') is not a non-negative integer"));
  CHECK_THROWS_WITH(parse_shape("a"), Contains("('a') is not a non-negative integer"));
  CHECK_THROWS_WITH(parse_shape("4294967296,4294967296"), Contains("array is too big"));
}

TEST_CASE("host arrays refuse shapes whose bytes overflow", "[sizes][host_array]") {
  CHECK_THROWS_WITH(host_array::zeros({std::int64_t{1} << 62}, dtype::float64), Contains("array is too big"));
  CHECK_THROWS_AS(host_array::empty({two_32, two_32}, dtype::uint8), value_error);
  CHECK_THROWS_AS(host_array::zeros({2, -1}), value_error);
  CHECK_THROWS_AS(host_array::arange(16).reshape({16, wraps_16}), value_error);
  CHECK_THROWS_AS(host_array::arange(16).reshape({-1, wraps_16, 16}), value_error);
}

TEST_CASE("reshaping a sharded array checks the product of the target shape", "[sizes][array]") {
  runtime rt(eight_cpus());
  auto x = device_put(host_array::arange(16).astype(dtype::float32), on_4x2(P("x")));
  CHECK_THROWS_MATCHES(reshape(x, {16, wraps_16}), value_error,
                       Message("cannot reshape array of size 16 into shape (16, 1152921504606846977)"));
  CHECK_THROWS_AS(reshape(x, {-1, wraps_16, 16}), value_error);
  CHECK(reshape(x, {-1, 2}).shape() == shape_t{8, 2});
}
