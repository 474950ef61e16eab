// device_put of host data to a set of shardings on 8 CPU devices, then resharding between every
// ordered pair: the values, the sharding and every shard's block must survive. Also the deleted-array
// errors and block_until_ready with a timeout.
#include "actormesh/devices/calls.hpp"
#include "actormesh/devices/runtime.hpp"
#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/ops.hpp"
#include "actormesh/sharding/positional_sharding.hpp"
#include "actormesh/sharding/random.hpp"
#include "actormesh/sharding/single_device_sharding.hpp"

#include "support/arrays.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

using namespace std::chrono_literals;

namespace {

using am::testing::eight_cpus;

/// A sharding with the name the test reports it by.
struct named_case {
  std::string name;
  am::sharding_ptr sharding;
};

/// The shardings every pair is drawn from (arrays of rank 2 whose dims divide by 8 and 4).
std::vector<named_case> shardings(const std::vector<am::device>& d) {
  const am::mesh m42({4, 2}, d, {"x", "y"});
  const am::mesh m8({8}, d, {"x"});
  return {
    {"mesh(4,2) P('x','y')", am::make_named_sharding(m42, am::P("x", "y"))},
    {"mesh(4,2) P('x')", am::make_named_sharding(m42, am::P("x"))},
    {"mesh(4,2) P(None,'y')", am::make_named_sharding(m42, am::P(am::none, "y"))},
    {"mesh(4,2) P(('x','y'))", am::make_named_sharding(m42, am::P(am::spec_entry{"x", "y"}))},
    {"mesh(4,2) P()", am::make_named_sharding(m42, am::P())},
    {"mesh(8) P('x')", am::make_named_sharding(m8, am::P("x"))},
    {"single device 3", am::make_single_device_sharding(d[3])},
    {"PositionalSharding reshape(4,2)", am::share(am::positional_sharding(d).reshape({4, 2}))},
  };
}

/// An (8, 4) array of `type` with distinct values (negative and fractional for floats).
am::host_array sample(am::dtype type) {
  auto h = am::host_array::arange(-12.5, 19.5, 1.0, am::dtype::float64).reshape({8, 4});
  return type == am::dtype::float32 ? h.astype(type) : am::host_array::arange(-12, 20, 1, type).reshape({8, 4});
}

/// The block of `h` that `index` names.
am::host_array block(const am::host_array& h, const am::shard_index& index) {
  std::vector<am::host_array::slice_spec> slices;
  for (const auto& r : index)
    slices.push_back({r.start, r.stop, 1});
  return h.slice(slices);
}

/// Checks every shard of `a`: the buffer is on the shard's device with the block's shape and dtype,
/// and its bytes are the block of `h` the shard's index names; the shard list matches the sharding.
void check_shards(const am::array& a, const am::host_array& h) {
  const auto want = a.sharding()->shard_placements(a.shape());
  const auto& got = a.addressable_shards();
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto& s = got[i];
    INFO("shard on " << am::to_string(s.device) << " index " << am::to_string(s.index));
    CHECK(s.device == want[i].device);
    CHECK(s.index == want[i].index);
    CHECK(s.replica_id == want[i].replica_id);
    const am::buffer_ref buf = s.data.get(30s);
    REQUIRE(buf != nullptr);
    const auto expected = block(h, s.index);
    CHECK(buf->device_id() == s.device.id);
    CHECK(buf->dtype() == h.dtype());
    CHECK(buf->shape() == expected.shape());
    const auto bytes = am::fetch(s.device, s.data).get(30s);
    REQUIRE(bytes.size() == expected.nbytes());
    CHECK(am::array_identical(am::host_array::from_bytes(bytes, buf->dtype(), buf->shape()), expected));
  }
}

} // namespace

TEST_CASE("device_put of host data lays every sharding out block by block", "[array][reshard]") {
  am::runtime rt(eight_cpus());
  const auto cases = shardings(am::devices(am::platform::cpu));
  for (auto type : {am::dtype::float32, am::dtype::int32}) {
    const auto h = sample(type);
    for (const auto& c : cases) {
      INFO(c.name << " " << am::name(type));
      const auto a = am::device_put(h, c.sharding);
      CHECK(a.shape() == h.shape());
      CHECK(a.dtype() == type);
      CHECK(a.sharding() == c.sharding);
      a.block_until_ready(30s);
      CHECK(am::array_identical(a.to_host(), h));
      check_shards(a, h);
    }
  }
}

TEST_CASE("device_put between every ordered pair of shardings keeps values and blocks", "[array][reshard]") {
  am::runtime rt(eight_cpus());
  const auto cases = shardings(am::devices(am::platform::cpu));
  for (auto type : {am::dtype::float32, am::dtype::int32}) {
    const auto h = sample(type);
    for (const auto& from : cases) {
      const auto a = am::device_put(h, from.sharding);
      for (const auto& to : cases) {
        INFO(from.name << " -> " << to.name << " " << am::name(type));
        const auto b = am::device_put(a, to.sharding);
        b.block_until_ready(30s);
        CHECK(b.sharding()->is_equivalent_to(*to.sharding, 2));
        CHECK(am::array_identical(b.to_host(), h));
        check_shards(b, h);
        // The source is untouched by the reshard.
        CHECK_FALSE(a.is_deleted());
      }
      CHECK(am::array_identical(a.to_host(), h));
      check_shards(a, h);
    }
  }
}

TEST_CASE("device_put to a sharding gives an array with that sharding, as JAX does", "[array][reshard]") {
  // JAX returns x itself only when x.sharding == s; otherwise the result carries s, even when s is
  // merely equivalent (the buffers may be reused).
  am::runtime rt(eight_cpus());
  const auto cases = shardings(am::devices(am::platform::cpu));
  const auto h = sample(am::dtype::float32);
  for (const auto& from : cases) {
    const auto a = am::device_put(h, from.sharding);
    for (const auto& to : cases) {
      INFO(from.name << " -> " << to.name);
      const auto b = am::device_put(a, to.sharding);
      CHECK(b.sharding()->to_string() == to.sharding->to_string());
    }
  }
}

TEST_CASE("device_put to one device and between devices", "[array][reshard]") {
  am::runtime rt(eight_cpus());
  const auto d = am::devices(am::platform::cpu);
  const auto h = sample(am::dtype::float32);
  const auto a = am::device_put(h, d[5]);
  REQUIRE(a.addressable_shards().size() == 1);
  CHECK(a.addressable_shards()[0].device == d[5]);
  CHECK(a.sharding()->is_equivalent_to(am::single_device_sharding(d[5]), 2));
  check_shards(a, h);
  const auto b = am::device_put(a, d[2]);
  REQUIRE(b.addressable_shards().size() == 1);
  CHECK(b.addressable_shards()[0].device == d[2]);
  check_shards(b, h);
  const auto c = am::device_put(am::device_put(h, am::make_named_sharding(am::mesh({4, 2}, d, {"x", "y"}), am::P("x", "y"))), d[7]);
  CHECK(c.addressable_shards()[0].device == d[7]);
  check_shards(c, h);
}

TEST_CASE("a deleted array says so with its shape", "[array][delete]") {
  am::runtime rt(eight_cpus());
  const auto d = am::devices(am::platform::cpu);
  const auto s = am::make_named_sharding(am::mesh({4, 2}, d, {"x", "y"}), am::P("x", "y"));
  auto a = am::device_put(sample(am::dtype::float32), s);
  const auto alias = a;  // copies share the array, like Python references
  CHECK_FALSE(a.is_deleted());
  a.delete_();
  CHECK(a.is_deleted());
  CHECK(alias.is_deleted());
  const std::string message = "Array has been deleted with shape=float32[8,4].";
  CHECK_THROWS_WITH(a.to_host(), message);
  CHECK_THROWS_WITH(alias.block_until_ready(), message);
  CHECK_THROWS_WITH(am::sin(a), message);
  CHECK_THROWS_WITH(a + 1.0, message);
  CHECK_THROWS_WITH(am::device_put(a, am::make_single_device_sharding(d[0])), message);
  // Metadata stays readable, as in JAX (its picture needs only the shape and the sharding).
  CHECK(a.shape() == am::shape_t{8, 4});
  CHECK(a.sharding() == s);
  CHECK_NOTHROW(am::visualize_array_sharding(a));
  CHECK(a.aval_string() == "float32[8,4]");
  // Deleting twice is harmless.
  CHECK_NOTHROW(a.delete_());
}

TEST_CASE("block_until_ready with a timeout", "[array][timeout]") {
  am::runtime rt(eight_cpus());
  const auto d = am::devices(am::platform::cpu);
  const auto one = am::make_single_device_sharding(d[0]);
  // Enough work on one device (about 50 million sines) that it cannot be done at once.
  auto big = am::normal(am::random_key(0), {4096, 4096}, one);
  auto r = am::sin(am::sin(am::sin(big)));
  CHECK_THROWS_AS(r.block_until_ready(0ms), am::timeout_error);
  CHECK_NOTHROW(r.block_until_ready(120s));
  CHECK_NOTHROW(r.block_until_ready(0ms));  // ready now: no wait at all
  // A small array is ready well within the timeout.
  const auto small = am::device_put(sample(am::dtype::int32), one);
  CHECK_NOTHROW(small.block_until_ready(30s));
  CHECK(am::array_identical(small.to_host(), sample(am::dtype::int32)));
}

TEST_CASE("an empty array handle raises value_error", "[array]") {
  am::array a;
  CHECK_THROWS_AS(a.shape(), am::value_error);
  CHECK_THROWS_AS(a.to_host(), am::value_error);
}
