// The host combine of pmap's reduction stages (devices/collectives/stage_reduction.hpp): parts
// combined in part order, element by element, across tile boundaries, as a sequential numpy sum;
// max and min let NaN win; one part is a copy; the CUDA stages are on exactly where the build has NCCL, unless
// AM_PMAP_NCCL_STAGES=0.
#include "devices/collectives/nccl_communicator.hpp"
#include "devices/collectives/stage_nccl.hpp"
#include "devices/collectives/stage_reduction.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <string>
#include <limits>
#include <vector>

using namespace am;
using namespace am::detail;

namespace {

/// Parts p = 0..n-1 of `count` float32 each, element j of part p = value(p, j).
template <class F>
std::vector<std::vector<float>> parts_of(int n, std::size_t count, F value) {
  std::vector<std::vector<float>> out(static_cast<std::size_t>(n), std::vector<float>(count));
  for (int p = 0; p < n; ++p)
    for (std::size_t j = 0; j < count; ++j)
      out[static_cast<std::size_t>(p)][j] = value(p, j);
  return out;
}

std::vector<const void*> pointers(const std::vector<std::vector<float>>& parts) {
  std::vector<const void*> out;
  for (auto& p : parts)
    out.push_back(p.data());
  return out;
}

} // namespace

TEST_CASE("a stage's sum adds the parts in part order, across tiles", "[stages]") {
  // 20000 elements: more than one 32 KiB tile (8192 float32) and not a multiple of it. Values whose
  // float32 sum depends on the order: 1e8, 1, -1e8, 1, ... summed left to right.
  const std::size_t count = 20000;
  auto parts = parts_of(5, count, [](int p, std::size_t j) {
    const float v[] = {1e8f, 1.0f, -1e8f, 1.0f, 0.5f};
    return v[p] * static_cast<float>(1 + j % 3);
  });
  std::vector<float> out(count);
  combine_parts(dtype::float32, reduce_op::sum, pointers(parts), count, out.data());
  for (std::size_t j = 0; j < count; ++j) {
    float acc = parts[0][j];
    for (std::size_t p = 1; p < parts.size(); ++p)
      acc += parts[p][j];
    REQUIRE(out[j] == acc); // ((1e8 + 1) - 1e8) + 1 + 0.5 = 1.5 scaled, not 2.5
  }
  CHECK(out[0] == 1.5f);
}

TEST_CASE("a stage's max and min let NaN win, one part is a copy, mean is the sum before dividing", "[stages]") {
  const std::size_t count = 9000;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto parts = parts_of(3, count, [&](int p, std::size_t j) {
    if (j == 8500 && p == 1)
      return nan;
    return static_cast<float>(p) - static_cast<float>(j % 7);
  });
  std::vector<float> mx(count), mn(count), one(count), mean(count);
  combine_parts(dtype::float32, reduce_op::max, pointers(parts), count, mx.data());
  combine_parts(dtype::float32, reduce_op::min, pointers(parts), count, mn.data());
  CHECK(std::isnan(mx[8500]));
  CHECK(std::isnan(mn[8500]));
  CHECK(mx[3] == 2.0f - 3.0f);
  CHECK(mn[3] == -3.0f);
  combine_parts(dtype::float32, reduce_op::sum, {parts[2].data()}, count, one.data());
  CHECK(one == parts[2]);
  combine_parts(dtype::float32, reduce_op::mean, pointers(parts), count, mean.data());
  CHECK(mean[3] == (0.0f - 3.0f) + (1.0f - 3.0f) + (2.0f - 3.0f));
}

TEST_CASE("stages reduce float32 and float64 only, and CUDA stages follow the build and AM_PMAP_NCCL_STAGES", "[stages]") {
  CHECK(stage_reduces(dtype::float32, reduce_op::sum));
  CHECK(stage_reduces(dtype::float64, reduce_op::max));
  CHECK_FALSE(stage_reduces(dtype::float16, reduce_op::sum));
  CHECK_FALSE(stage_reduces(dtype::int32, reduce_op::sum));
  const char* setting = std::getenv("AM_PMAP_NCCL_STAGES");
  if (setting != nullptr && std::string(setting) == "0")
    CHECK_FALSE(nccl_stages_enabled());
  else
    CHECK(nccl_stages_enabled() == am::nccl_available());
  CHECK_THROWS(combine_parts(dtype::float32, reduce_op::sum, {}, 4, nullptr));
}
