// Fused CUDA kernels without a GPU: the generated source of several programs compiles with NVRTC
// to an sm_90 cubin (NVRTC needs no driver). Only meaningful when CUDA is compiled in.
#include "actormesh/build_config.hpp"

#include <catch2/catch.hpp>

#if AM_HAVE_CUDA

#include "actormesh/actors/program.hpp"
#include "devices/cuda/cuda_plan.hpp"
#include "devices/cuda/fused_codegen.hpp"
#include "devices/cuda/nvrtc_compiler.hpp"

#include <string>
#include <vector>

namespace {

using namespace am;
using namespace am::detail::cuda;

constexpr dtype all_dtypes[] = {dtype::bool_, dtype::uint8, dtype::int32, dtype::int64,
                                dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64};

/// The fused stages of a program's plan.
std::vector<stage> fused_stages(const execution_plan& plan) {
  std::vector<stage> out;
  for (auto& s : plan.stages)
    if (s.kind == stage::kind_t::fused && !runs_as_single(s))
      out.push_back(s);
  return out;
}

/// Compiles every fused stage of `p` for sm_90 and checks the compiler said nothing bad.
void compiles(const std::shared_ptr<const program>& p, std::size_t expected_kernels) {
  auto plan = plan_program(*p, true);
  auto stages = fused_stages(plan);
  REQUIRE(stages.size() == expected_kernels);
  for (auto& s : stages) {
    auto source = fused_kernel_source(fused_kernel_body(*p, plan, s));
    auto result = compile_to_cubin(source, "test.cu", 90, fused_kernel_headers());
    INFO(p->name << ":\n" << fused_kernel_body(*p, plan, s) << "\nlog:\n" << result.log);
    CHECK(result.ok);
    CHECK(result.log.find("error") == std::string::npos);
    CHECK(result.log.find("warning") == std::string::npos);
    CHECK(result.cubin.size() > 4);
    if (result.cubin.size() > 4)
      CHECK(std::string(result.cubin.data() + 1, 3) == "ELF");
  }
}

/// The seed's complex_computation: (tanh(sin x * cos x) + sqrt|x|) * 2.
std::shared_ptr<const program> complex_computation(shape_t shape, dtype t = dtype::float32) {
  value_type vt{t, shape};
  program_builder b("complex_computation");
  auto x = b.parameter(vt);
  auto y = b.binary(opcode::multiply, b.unary(opcode::sin, x), b.unary(opcode::cos, x));
  auto z = b.binary(opcode::add, b.unary(opcode::tanh, y), b.unary(opcode::sqrt, b.unary(opcode::abs, x)));
  auto two = b.broadcast_in_dim(b.constant(2.0, {t, {}}), shape, {});
  b.output(b.binary(opcode::multiply, z, two));
  return b.build();
}

} // namespace

TEST_CASE("NVRTC is found without a GPU", "[nvrtc]") {
  std::string why;
  INFO(why);
  REQUIRE(nvrtc_available(&why));
  CHECK_FALSE(nvrtc_version().empty());
}

TEST_CASE("complex_computation fuses into one kernel that compiles for sm_90", "[nvrtc]") {
  auto p = complex_computation({8192, 8192});
  auto plan = plan_program(*p, true);
  REQUIRE(plan.stages.size() == 1);
  auto& s = plan.stages[0];
  CHECK(s.kind == stage::kind_t::fused);
  CHECK(s.inputs == std::vector<std::int32_t>{0});
  CHECK(s.outputs == std::vector<std::int32_t>{p->outputs[0]});
  CHECK(s.scalars.size() == 1); // the 2.0 is an argument, not baked into the source
  auto body = fused_kernel_body(*p, plan, s);
  CHECK(body.find("8192") == std::string::npos); // sizes are arguments too
  compiles(p, 1);
  for (auto t : {dtype::float16, dtype::bfloat16, dtype::float64})
    compiles(complex_computation({3, 5}, t), 1);
}

TEST_CASE("programs that differ only in size or scalar share one kernel source", "[nvrtc]") {
  auto source = [](const std::shared_ptr<const program>& p) {
    auto plan = plan_program(*p, true);
    return fused_kernel_body(*p, plan, plan.stages.at(0));
  };
  CHECK(source(complex_computation({4})) == source(complex_computation({1000, 3})));
}

TEST_CASE("comparisons and select compile for every dtype", "[nvrtc]") {
  for (auto t : all_dtypes) {
    value_type vt{t, {64}};
    program_builder b(std::string("compare_select_") + std::string(name(t)));
    auto x = b.parameter(vt);
    auto y = b.parameter(vt);
    for (auto op : {opcode::equal, opcode::not_equal, opcode::less, opcode::less_equal, opcode::greater,
                    opcode::greater_equal})
      b.output(b.select(b.binary(op, x, y), x, y));
    compiles(b.build(), 1);
  }
}

TEST_CASE("every elementwise operation compiles for every dtype", "[nvrtc]") {
  for (auto t : all_dtypes) {
    value_type vt{t, {7, 3}};
    program_builder b(std::string("all_ops_") + std::string(name(t)));
    auto x = b.parameter(vt);
    auto y = b.parameter(vt);
    for (auto op : {opcode::neg, opcode::abs, opcode::sin, opcode::cos, opcode::tanh, opcode::exp,
                    opcode::log, opcode::sqrt, opcode::square})
      b.output(b.unary(op, x));
    for (auto op : {opcode::add, opcode::subtract, opcode::multiply, opcode::divide, opcode::floor_divide,
                    opcode::maximum, opcode::minimum, opcode::power})
      b.output(b.binary(op, x, y));
    b.output(b.binary(opcode::add, b.iota(vt), b.constant(-3.5, vt)));
    compiles(b.build(), 1);
  }
}

TEST_CASE("converts between all dtypes compile as one kernel", "[nvrtc]") {
  program_builder b("convert_all");
  for (auto from : all_dtypes) {
    auto x = b.parameter({from, {16}});
    for (auto to : all_dtypes)
      b.output(b.convert(x, to));
  }
  compiles(b.build(), 1);
}

TEST_CASE("random sources compile fused, with key and offsets as arguments", "[nvrtc]") {
  for (auto t : {dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64}) {
    value_type vt{t, {4, 8}};
    program_builder b(std::string("random_") + std::string(name(t)));
    auto u = b.random(opcode::random_uniform, vt, 42, {16, 8}, {4, 0});
    auto n = b.random(opcode::random_normal, vt, 7, {16, 8}, {4, 0});
    b.output(b.binary(opcode::add, b.binary(opcode::multiply, u, b.constant(2, vt)), n));
    auto p = b.build();
    compiles(p, 1);
    auto plan = plan_program(*p, true);
    auto body = fused_kernel_body(*p, plan, plan.stages.at(0));
    CHECK(body.find("key0") != std::string::npos);
    CHECK(body.find("base0") != std::string::npos);
    CHECK(body.find("42") == std::string::npos);
  }
}

TEST_CASE("random bits and ranged uniform values compile fused", "[nvrtc]") {
  for (auto t : {dtype::uint8, dtype::int32, dtype::int64}) { // jax.random.bits
    program_builder b(std::string("bits_") + std::string(name(t)));
    auto r = b.random(opcode::random_uniform, {t, {4, 8}}, 42, {16, 8}, {4, 0});
    b.output(b.binary(opcode::add, r, r));
    compiles(b.build(), 1);
  }
  for (auto t : {dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64}) { // minval / maxval
    value_type vt{t, {4, 8}};
    program_builder b(std::string("ranged_") + std::string(name(t)));
    auto u = b.random(opcode::random_uniform, vt, 42, {16, 8}, {4, 0}, {-0.0, 3.5});
    b.output(b.binary(opcode::multiply, u, b.constant(2, vt)));
    auto p = b.build();
    compiles(p, 1);
    auto plan = plan_program(*p, true);
    CHECK(fused_kernel_body(*p, plan, plan.stages.at(0)).find("random_in_range") != std::string::npos);
  }
}

TEST_CASE("broadcasts of materialized values and reshapes fuse", "[nvrtc]") {
  program_builder b("broadcast_reshape");
  auto col = b.parameter({dtype::float32, {4, 1}});
  auto row = b.parameter({dtype::float32, {8}});
  auto a = b.broadcast_in_dim(col, {4, 8}, {0, 1});
  auto r = b.broadcast_in_dim(row, {4, 8}, {1});
  auto sum = b.binary(opcode::add, a, r);
  auto flat = b.reshape(sum, {32});
  b.output(b.binary(opcode::multiply, flat, b.iota({dtype::float32, {32}})));
  compiles(b.build(), 1);
}

#else

TEST_CASE("NVRTC code generation needs a CUDA build", "[nvrtc]") {
  SUCCEED("actormesh was built without CUDA: nothing to compile");
}

#endif
