// The counter-based generator (JAX's threefry2x32): known answers, values independent of how the array is split
// into blocks (and of the device), ranges and moments, and key splitting.
#include "cpu_test_support.hpp"

#include "devices/detail/random_counter.hpp"

#include <set>
#include <string>

using namespace cpu_test;
namespace rng = am::detail::rng;

namespace {

/// The global [8,6] array of `op`/`dt` under `key`, generated as blocks of `block` (spread over the
/// devices) and reassembled on the host.
std::vector<std::byte> generate(am::opcode op, am::dtype dt, std::uint64_t key, const am::shape_t& block) {
  const am::shape_t global{8, 6};
  auto esize = am::size_of(dt);
  std::vector<std::byte> out(48 * esize);
  auto devices = am::devices();
  int k = 0;
  for (std::int64_t r0 = 0; r0 < 8; r0 += block[0])
    for (std::int64_t c0 = 0; c0 < 6; c0 += block[1]) {
      am::program_builder b("random");
      b.output(b.random(op, {dt, block}, key, global, {r0, c0}));
      auto& d = devices[static_cast<std::size_t>(k++) % devices.size()];
      auto bytes = run_on(d, b.build(), {})[0];
      for (std::int64_t r = 0; r < block[0]; ++r)
        std::memcpy(out.data() + static_cast<std::size_t>((r0 + r) * 6 + c0) * esize,
                    bytes.data() + static_cast<std::size_t>(r * block[1]) * esize,
                    static_cast<std::size_t>(block[1]) * esize);
    }
  return out;
}

} // namespace

TEST_CASE("threefry2x32 gives Random123's known answers", "[cpu][random]") {
  auto b = rng::threefry2x32(0, 0, 0, 0);
  CHECK(b.w0 == 0x6b200159u);
  CHECK(b.w1 == 0x99ba4efeu);
  b = rng::threefry2x32(~0u, ~0u, ~0u, ~0u);
  CHECK(b.w0 == 0x1cb996fcu);
  CHECK(b.w1 == 0xbb002be7u);
  b = rng::threefry2x32(0x13198a2eu, 0x03707344u, 0x243f6a88u, 0x85a308d3u);
  CHECK(b.w0 == 0xc4923a9cu);
  CHECK(b.w1 == 0x483df7a0u);
}

TEST_CASE("random values do not depend on the block split or the device", "[cpu][random]") {
  am::runtime rt(small_runtime(4));
  for (auto op : {am::opcode::random_uniform, am::opcode::random_normal})
    for (auto dt : {am::dtype::float32, am::dtype::float64, am::dtype::float16, am::dtype::bfloat16}) {
      INFO(am::opcode_name(op) << " " << am::name(dt));
      auto whole = generate(op, dt, 1234, {8, 6});
      CHECK(generate(op, dt, 1234, {4, 6}) == whole);   // 2 blocks of rows
      CHECK(generate(op, dt, 1234, {2, 6}) == whole);   // 4 blocks of rows
      CHECK(generate(op, dt, 1234, {8, 3}) == whole);   // 2 blocks of columns
      CHECK(generate(op, dt, 1234, {4, 3}) == whole);   // 4 blocks, 2 x 2
      CHECK(generate(op, dt, 1234, {1, 1}) == whole);   // 48 single elements
      CHECK(generate(op, dt, 1235, {8, 6}) != whole);   // another key, other values
    }
}

TEST_CASE("uniform float32 is the documented function of key and index", "[cpu][random]") {
  am::runtime rt(small_runtime(1));
  const std::uint64_t key = 0xfeedface12345678ull;
  am::program_builder b("uniform");
  b.output(b.random(am::opcode::random_uniform, {am::dtype::float32, {3, 5}}, key, {10, 20}, {2, 7}));
  auto got = from_bytes<float>(run_on(am::devices()[0], b.build(), {})[0]);
  for (std::int64_t r = 0; r < 3; ++r)
    for (std::int64_t c = 0; c < 5; ++c) {
      auto index = static_cast<std::uint64_t>((2 + r) * 20 + 7 + c);
      auto words = rng::threefry2x32(0xfeedfaceu, 0x12345678u, 0, static_cast<std::uint32_t>(index));
      float want = static_cast<float>((words.w0 ^ words.w1) >> 9) / 8388608.0f;
      CHECK(got[static_cast<std::size_t>(r * 5 + c)] == want);
      CHECK(rng::uniform_float32(key, index) == want);
    }
}

TEST_CASE("uniform values lie between 0 (included) and 1 (excluded) and normal values have the right moments", "[cpu][random]") {
  am::runtime rt(small_runtime(1));
  auto d = am::devices()[0];
  const std::int64_t n = 200000;
  am::program_builder b("moments");
  b.output(b.random(am::opcode::random_uniform, {am::dtype::float32, {n}}, 7, {n}, {0}));
  b.output(b.random(am::opcode::random_normal, {am::dtype::float64, {n}}, 7, {n}, {0}));
  b.output(b.random(am::opcode::random_uniform, {am::dtype::bfloat16, {n}}, 7, {n}, {0}));
  auto out = run_on(d, b.build(), {});
  auto u = from_bytes<float>(out[0]);
  auto z = from_bytes<double>(out[1]);
  auto h = from_bytes<am::bfloat16>(out[2]);
  double su = 0, sz = 0, szz = 0;
  for (auto v : u) {
    REQUIRE(v >= 0.0f);
    REQUIRE(v < 1.0f);
    su += v;
  }
  for (auto v : h) {
    REQUIRE(static_cast<float>(v) >= 0.0f);
    REQUIRE(static_cast<float>(v) < 1.0f);
  }
  for (auto v : z) {
    REQUIRE(std::isfinite(v));
    sz += v;
    szz += v * v;
  }
  CHECK(std::fabs(su / n - 0.5) < 0.005);
  CHECK(std::fabs(sz / n) < 0.01);
  CHECK(std::fabs(szz / n - 1.0) < 0.02);
  std::set<float> distinct(u.begin(), u.end());
  CHECK(distinct.size() > static_cast<std::size_t>(n) * 98 / 100); // 2**23 float32 values in [0, 1)
}

TEST_CASE("split_key is deterministic and spreads keys", "[cpu][random]") {
  std::set<std::uint64_t> keys;
  for (std::uint64_t k = 0; k < 4; ++k)
    for (std::uint64_t i = 0; i < 256; ++i) {
      CHECK(am::detail::split_key(k, i) == am::detail::split_key(k, i));
      keys.insert(am::detail::split_key(k, i));
    }
  CHECK(keys.size() == 1024);
  CHECK(am::detail::split_key(0, 0) != 0);
}
