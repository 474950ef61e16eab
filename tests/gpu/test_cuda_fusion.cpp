// Fused CUDA kernels against the CPU device: the seed's complex_computation, programs mixing fused
// regions with reductions and broadcasts, every operation of a dtype in one kernel, random sources
// inside regions, and the compile-once cache. Exits with 4 (skipped) where no GPU is usable.
#include "gpu/gpu_support.hpp"

#include "actormesh/build_config.hpp"
#if AM_HAVE_CUDA
#include "devices/cuda/fused_kernels.hpp"
#endif

using namespace am;
using namespace am::testing;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<const program> complex_computation(const shape_t& shape, dtype t = dtype::float32) {
  value_type vt{t, shape};
  program_builder b("complex_computation");
  auto x = b.parameter(vt);
  auto y = b.binary(opcode::multiply, b.unary(opcode::sin, x), b.unary(opcode::cos, x));
  auto z = b.binary(opcode::add, b.unary(opcode::tanh, y), b.unary(opcode::sqrt, b.unary(opcode::abs, x)));
  b.output(b.binary(opcode::multiply, z, b.broadcast_in_dim(b.constant(2.0, {t, {}}), shape, {})));
  return b.build();
}

std::vector<double> spread(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = -10.0 + 20.0 * static_cast<double>((i * 7919) % 100003) / 100003.0;
  return v;
}

std::uint64_t kernels_compiled() {
#if AM_HAVE_CUDA
  return detail::cuda::compiled_kernel_count();
#else
  return 0;
#endif
}

} // namespace

TEST_CASE("complex_computation fused agrees with the CPU device", "[gpu]") {
  require_gpu();
  fusion_setting fused(true);
  runtime rt;
  auto gpu = devices(platform::cuda).at(0);
  auto cpu = devices(platform::cpu).at(0);
  for (auto t : {dtype::float32, dtype::float64, dtype::float16, dtype::bfloat16}) {
    shape_t shape{512, 1024};
    compare_with_cpu(gpu, cpu, complex_computation(shape, t), {encode(t, spread(512 * 1024))}, transcendental(t));
  }
}

TEST_CASE("a program object compiles once, sizes and scalars reuse the kernel", "[gpu]") {
  require_gpu();
  fusion_setting fused(true);
  runtime rt;
  auto gpu = devices(platform::cuda).at(0);
  auto p = complex_computation({1000});
  auto x = upload(gpu, encode(dtype::float32, spread(1000)), {dtype::float32, {1000}});
  execute(gpu, p, {x})[0].get(60s);
  auto after_first = kernels_compiled();
  for (int k = 0; k < 5; ++k)
    execute(gpu, p, {x})[0].get(60s);
  auto y = upload(gpu, encode(dtype::float32, spread(77)), {dtype::float32, {7, 11}});
  execute(gpu, complex_computation({7, 11}), {y})[0].get(60s);
  CHECK(kernels_compiled() == after_first);
}

TEST_CASE("regions around a reduction and a broadcast agree with the CPU device", "[gpu]") {
  require_gpu();
  fusion_setting fused(true);
  runtime rt;
  auto gpu = devices(platform::cuda).at(0);
  auto cpu = devices(platform::cpu).at(0);
  value_type t{dtype::float32, {64, 300}};
  program_builder b("softmax");
  auto x = b.parameter(t);
  auto m = b.reduce(opcode::reduce_max, x, {1});
  auto shifted = b.binary(opcode::subtract, x, b.broadcast_in_dim(m, {64, 300}, {0}));
  auto e = b.unary(opcode::exp, shifted);
  auto s = b.reduce(opcode::reduce_sum, e, {1});
  auto out = b.binary(opcode::divide, e, b.broadcast_in_dim(s, {64, 300}, {0}));
  b.output(out);
  b.output(b.transpose(out, {1, 0}));
  b.output(b.constant(4, {dtype::int32, {3}}));
  b.output(b.reshape(x, {300, 64}));
  compare_with_cpu(gpu, cpu, b.build(), {encode(dtype::float32, spread(64 * 300))}, {1e-5, 1e-7});
}

TEST_CASE("every operation of a dtype fused into one kernel agrees with the CPU device", "[gpu]") {
  require_gpu();
  fusion_setting fused(true);
  runtime rt;
  auto gpu = devices(platform::cuda).at(0);
  auto cpu = devices(platform::cpu).at(0);
  for (auto t : all_dtypes()) {
    value_type vt{t, {257}};
    program_builder b("everything_" + std::string(name(t)));
    auto x = b.parameter(vt);
    auto y = b.parameter(vt);
    // Exact operations chained through each other, so intermediates stay in registers.
    auto acc = b.binary(opcode::add, x, y);
    acc = b.binary(opcode::multiply, acc, b.unary(opcode::neg, y));
    acc = b.binary(opcode::maximum, acc, b.unary(opcode::abs, x));
    acc = b.binary(opcode::divide, acc, b.binary(opcode::subtract, y, b.constant(3, vt)));
    acc = b.select(b.binary(opcode::less, acc, x), b.unary(opcode::square, acc), b.binary(opcode::minimum, x, y));
    b.output(acc);
    b.output(b.convert(b.convert(acc, dtype::float32), t));
    b.output(b.binary(opcode::greater_equal, acc, b.iota(vt)));
    compare_with_cpu(gpu, cpu, b.build(), {encode(t, sample_values(t, 257, 4)), encode(t, sample_values(t, 257, 5))}, {});
    program_builder tb("transcendental_" + std::string(name(t)));
    auto u = tb.parameter(vt);
    tb.output(tb.unary(opcode::exp, tb.unary(opcode::sin, u)));
    tb.output(tb.unary(opcode::log, tb.unary(opcode::sqrt, tb.unary(opcode::abs, u))));
    tb.output(tb.binary(opcode::power, tb.unary(opcode::tanh, u), tb.unary(opcode::cos, u)));
    auto tol = transcendental(t);
    if (is_floating(t)) { // two roundings in a chain: allow twice the single-operation error
      tol.relative *= 2;
      tol.absolute *= 2;
    }
    compare_with_cpu(gpu, cpu, tb.build(), {encode(t, spread(257))}, tol);
  }
}

TEST_CASE("random values inside a fused region are the CPU device's bit for bit", "[gpu]") {
  require_gpu();
  fusion_setting fused(true);
  runtime rt;
  auto gpu = devices(platform::cuda).at(0);
  auto cpu = devices(platform::cpu).at(0);
  value_type t{dtype::float32, {128, 256}};
  program_builder b("random_affine");
  auto u = b.random(opcode::random_uniform, t, 0x5eed, {512, 256}, {128, 0});
  b.output(b.binary(opcode::add, b.binary(opcode::multiply, u, b.constant(2, t)), b.constant(-1, t)));
  b.output(u);
  compare_with_cpu(gpu, cpu, b.build(), {}, {});
}
