// How the CUDA executor splits programs into stages (devices/cuda/cuda_plan.hpp): fused elementwise
// regions, single structural stages, deferred constants and releases. Plain C++, no GPU needed.
#include "actormesh/build_config.hpp"

#include <catch2/catch.hpp>

#if AM_HAVE_CUDA

#include "actormesh/actors/program.hpp"
#include "devices/cuda/cuda_plan.hpp"

#include <algorithm>

namespace {

using namespace am;
using namespace am::detail::cuda;
using ids = std::vector<std::int32_t>;

bool contains(const ids& v, std::int32_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

} // namespace

TEST_CASE("unfused plans run one instruction per stage", "[cuda_plan]") {
  value_type t{dtype::float32, {8}};
  program_builder b("chain");
  auto x = b.parameter(t);
  b.output(b.binary(opcode::add, b.unary(opcode::sin, x), b.constant(1, t)));
  auto p = b.build();
  auto plan = plan_program(*p, false);
  REQUIRE(plan.stages.size() == 3);
  for (auto& s : plan.stages)
    CHECK(s.kind == stage::kind_t::single);
  CHECK(plan.stages[0].instruction == 1);
  CHECK(plan.stages[2].instruction == 3);
}

TEST_CASE("a structural operation splits elementwise regions", "[cuda_plan]") {
  value_type t{dtype::float32, {4, 4}};
  program_builder b("split");
  auto x = b.parameter(t);
  auto s = b.unary(opcode::sin, x);
  auto tr = b.transpose(s, {1, 0});
  b.output(b.unary(opcode::cos, tr));
  auto p = b.build();
  auto plan = plan_program(*p, true);
  REQUIRE(plan.stages.size() == 3);
  CHECK(plan.stages[0].kind == stage::kind_t::fused);
  CHECK(plan.stages[0].outputs == ids{s});
  CHECK(runs_as_single(plan.stages[0]));
  CHECK(plan.stages[1].kind == stage::kind_t::single);
  CHECK(plan.stages[1].instruction == tr);
  CHECK(plan.stages[2].inputs == ids{tr});
}

TEST_CASE("softmax-like programs: region, reduction, region with a broadcast", "[cuda_plan]") {
  value_type t{dtype::float32, {4, 8}};
  program_builder b("softmax");
  auto x = b.parameter(t);
  auto e = b.unary(opcode::exp, x);
  auto sum = b.reduce(opcode::reduce_sum, e, {1});
  auto wide = b.broadcast_in_dim(sum, {4, 8}, {0});
  auto out = b.binary(opcode::divide, e, wide);
  b.output(out);
  auto p = b.build();
  auto plan = plan_program(*p, true);
  REQUIRE(plan.stages.size() == 3);
  CHECK(plan.stages[0].members == ids{e});
  CHECK(plan.stages[1].instruction == sum);
  auto& last = plan.stages[2];
  CHECK(last.members == ids{wide, out});
  CHECK(contains(last.inputs, sum));
  CHECK(contains(last.inputs, e));
  CHECK(last.outputs == ids{out});
  CHECK(contains(plan.stages[0].release, x));
  CHECK(contains(last.release, e));
  CHECK(contains(last.release, sum));
  CHECK_FALSE(contains(last.release, out));
}

TEST_CASE("independent structural work runs before the open region", "[cuda_plan]") {
  value_type t{dtype::float32, {4, 4}};
  program_builder b("independent");
  auto x = b.parameter(t);
  auto y = b.parameter(t);
  auto s = b.unary(opcode::sin, x);
  auto tr = b.transpose(y, {1, 0});
  auto sum = b.binary(opcode::add, s, tr);
  b.output(sum);
  auto p = b.build();
  auto plan = plan_program(*p, true);
  REQUIRE(plan.stages.size() == 2);
  CHECK(plan.stages[0].instruction == tr);
  CHECK(plan.stages[1].members == ids{s, sum});
  CHECK(plan.stages[1].outputs == ids{sum});
}

TEST_CASE("constants are inlined as arguments and filled only when needed", "[cuda_plan]") {
  value_type t{dtype::int32, {6}};
  program_builder b("constants");
  auto x = b.parameter(t);
  auto c = b.constant(3, {dtype::int32, {}});
  auto wide = b.broadcast_in_dim(c, {6}, {});
  auto sum = b.binary(opcode::add, x, wide);
  auto sliced = b.slice(wide, {1}, {4});
  b.output(sum);
  b.output(sliced);
  b.output(c);
  auto p = b.build();
  auto plan = plan_program(*p, true);
  CHECK(plan.constant_root[static_cast<std::size_t>(wide)] == c);
  auto fused = std::find_if(plan.stages.begin(), plan.stages.end(),
                            [](const stage& s) { return s.kind == stage::kind_t::fused; });
  REQUIRE(fused != plan.stages.end());
  CHECK(fused->scalars == ids{c});
  CHECK(fused->inputs == ids{x});
  // The slice reads the broadcast constant from a buffer, and the caller gets the constant itself.
  int fills = 0;
  for (auto& s : plan.stages)
    if (s.kind == stage::kind_t::single && (s.instruction == wide || s.instruction == c))
      ++fills;
  CHECK(fills == 2);
}

TEST_CASE("regions of different sizes are different kernels", "[cuda_plan]") {
  program_builder b("sizes");
  auto x = b.parameter({dtype::float32, {4}});
  auto y = b.parameter({dtype::float32, {6}});
  b.output(b.unary(opcode::exp, x));
  b.output(b.unary(opcode::exp, y));
  auto plan = plan_program(*b.build(), true);
  REQUIRE(plan.stages.size() == 2);
  CHECK(plan.stages[0].elements == 4);
  CHECK(plan.stages[1].elements == 6);
}

#else

TEST_CASE("CUDA plans need a CUDA build", "[cuda_plan]") {
  SUCCEED("actormesh was built without CUDA");
}

#endif
