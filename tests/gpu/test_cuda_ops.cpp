// Every opcode for every dtype on a CUDA device, against the same program on a CPU device (the
// reference semantics), once with one kernel per instruction (AM_CUDA_FUSION=off) and once with
// fused kernels. Exits with 4 (skipped) where no GPU is usable.
#include "gpu/gpu_support.hpp"

using namespace am;
using namespace am::testing;

namespace {

/// The devices of a runtime started with fusion on or off.
struct gpu_rig {
  fusion_setting fusion;
  runtime rt;
  device gpu;
  device cpu;

  explicit gpu_rig(bool fused)
    : fusion(fused), rt(), gpu(devices(platform::cuda).at(0)), cpu(devices(platform::cpu).at(0)) {}
};

const opcode unary_ops[] = {opcode::neg, opcode::abs,  opcode::sin,  opcode::cos,   opcode::tanh,
                            opcode::exp, opcode::log,  opcode::sqrt, opcode::square};
const opcode binary_ops[] = {opcode::add,     opcode::subtract, opcode::multiply, opcode::divide,
                             opcode::floor_divide, opcode::maximum, opcode::minimum, opcode::power};
const opcode comparisons[] = {opcode::equal,   opcode::not_equal, opcode::less,
                              opcode::less_equal, opcode::greater, opcode::greater_equal};

bool is_transcendental(opcode op) {
  return op == opcode::sin || op == opcode::cos || op == opcode::tanh || op == opcode::exp
         || op == opcode::log || op == opcode::sqrt || op == opcode::power;
}

std::string label(opcode op, dtype t) {
  return std::string(opcode_name(op)) + "_" + std::string(name(t));
}

void elementwise_suite(bool fused) {
  gpu_rig rig(fused);
  constexpr std::int64_t n = 301;
  for (auto t : all_dtypes()) {
    value_type vt{t, {n}};
    auto xs = encode(t, sample_values(t, n, 1));
    auto ys = encode(t, sample_values(t, n, 2));
    for (auto op : unary_ops) {
      program_builder b(label(op, t));
      b.output(b.unary(op, b.parameter(vt)));
      compare_with_cpu(rig.gpu, rig.cpu, b.build(), {xs}, is_transcendental(op) ? transcendental(t) : tolerance{});
    }
    for (auto op : binary_ops) {
      program_builder b(label(op, t));
      auto x = b.parameter(vt);
      b.output(b.binary(op, x, b.parameter(vt)));
      compare_with_cpu(rig.gpu, rig.cpu, b.build(), {xs, ys}, is_transcendental(op) ? transcendental(t) : tolerance{});
    }
    for (auto op : comparisons) {
      program_builder b(label(op, t));
      auto x = b.parameter(vt);
      b.output(b.binary(op, x, b.parameter(vt)));
      compare_with_cpu(rig.gpu, rig.cpu, b.build(), {xs, ys}, {});
    }
    {
      program_builder b(label(opcode::select, t));
      auto p = b.parameter({dtype::bool_, {n}});
      auto x = b.parameter(vt);
      b.output(b.select(p, x, b.parameter(vt)));
      compare_with_cpu(rig.gpu, rig.cpu, b.build(), {encode(dtype::bool_, sample_values(dtype::bool_, n, 3)), xs, ys}, {});
    }
    for (auto to : all_dtypes()) {
      program_builder b("convert_" + std::string(name(t)) + "_to_" + std::string(name(to)));
      b.output(b.convert(b.parameter(vt), to));
      compare_with_cpu(rig.gpu, rig.cpu, b.build(), {xs}, {});
    }
    {
      program_builder b("sources_" + std::string(name(t)));
      b.output(b.constant(-3.5, vt));
      b.output(b.constant(1e10, vt));
      b.output(b.iota(vt));
      b.output(b.iota({t, {3, 100}}));
      compare_with_cpu(rig.gpu, rig.cpu, b.build(), {}, {});
    }
  }
}

void structural_suite(bool fused) {
  gpu_rig rig(fused);
  for (auto t : all_dtypes()) {
    auto values = [&](std::int64_t count, int seed) { return encode(t, sample_values(t, static_cast<std::size_t>(count), seed)); };
    {
      program_builder b("broadcast_reshape_" + std::string(name(t)));
      auto col = b.parameter({t, {5, 1}});
      auto row = b.parameter({t, {4}});
      b.output(b.broadcast_in_dim(col, {5, 4}, {0, 1}));
      b.output(b.broadcast_in_dim(row, {3, 5, 4}, {2}));
      b.output(b.reshape(b.broadcast_in_dim(col, {5, 4}, {0, 1}), {2, 10}));
      b.output(b.reshape(col, {5}));
      compare_with_cpu(rig.gpu, rig.cpu, b.build(), {values(5, 1), values(4, 2)}, {});
    }
    {
      program_builder b("transpose_slice_concat_" + std::string(name(t)));
      auto x = b.parameter({t, {3, 4, 5}});
      auto y = b.parameter({t, {6, 7}});
      b.output(b.transpose(x, {2, 0, 1}));
      b.output(b.transpose(y, {1, 0}));
      b.output(b.slice(y, {1, 2}, {5, 6}));
      b.output(b.slice(x, {0, 1, 0}, {3, 3, 5}));
      b.output(b.concatenate({y, b.slice(y, {0, 0}, {6, 3}), y}, 1));
      b.output(b.concatenate({y, y}, 0));
      compare_with_cpu(rig.gpu, rig.cpu, b.build(), {values(60, 1), values(42, 2)}, {});
    }
    auto exact_sums = [&](std::int64_t count) {
      std::vector<double> v(static_cast<std::size_t>(count));
      for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = t == dtype::bool_ ? static_cast<double>(i % 3 == 0) : t == dtype::uint8 ? static_cast<double>(i % 7) : (static_cast<double>(i % 17) - 8) * 0.25 * (is_integer(t) ? 4 : 1);
      return encode(t, v);
    };
    for (auto op : {opcode::reduce_sum, opcode::reduce_max, opcode::reduce_min}) {
      program_builder b(label(op, t));
      auto x = b.parameter({t, {6, 50, 7}});
      for (auto axes : std::vector<std::vector<std::int64_t>>{{1}, {0, 2}, {0, 1, 2}, {}, {2}})
        b.output(b.reduce(op, x, axes));
      auto big = b.parameter({t, {1000, 3000}});
      for (auto axes : std::vector<std::vector<std::int64_t>>{{1}, {0}, {0, 1}})
        b.output(b.reduce(op, big, axes));
      // The small input has NaN and infinities among its values (max/min propagate NaN); the big one
      // has sums that are exact in every accumulation order.
      auto small = op == opcode::reduce_sum ? exact_sums(2100) : values(2100, 1);
      std::vector<std::vector<std::byte>> inputs{small, exact_sums(3000000)};
      compare_with_cpu(rig.gpu, rig.cpu, b.build(), inputs, {});
    }
    {
      program_builder b(label(opcode::dot, t));
      auto x = b.parameter({t, {33, 47}});
      auto y = b.parameter({t, {47, 29}});
      b.output(b.dot(x, y));
      std::vector<double> a(33 * 47), c(47 * 29);
      for (std::size_t i = 0; i < a.size(); ++i)
        a[i] = t == dtype::bool_ ? static_cast<double>(i % 5 == 0) : static_cast<double>(i % 5) - (t == dtype::uint8 ? 0 : 2);
      for (std::size_t i = 0; i < c.size(); ++i)
        c[i] = t == dtype::bool_ ? static_cast<double>(i % 7 == 0) : static_cast<double>(i % 3) - (t == dtype::uint8 ? 0 : 1);
      compare_with_cpu(rig.gpu, rig.cpu, b.build(), {encode(t, a), encode(t, c)}, {});
    }
  }
}

void random_suite(bool fused) {
  gpu_rig rig(fused);
  for (auto t : {dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64}) {
    value_type block{t, {64, 96}};
    program_builder b("random_" + std::string(name(t)));
    b.output(b.random(opcode::random_uniform, block, 1234, {256, 96}, {64, 0}));
    b.output(b.random(opcode::random_uniform, {t, {5, 7, 3}}, 99, {9, 7, 4}, {4, 0, 1}));
    compare_with_cpu(rig.gpu, rig.cpu, b.build(), {}, {}); // uniform: bit for bit
    program_builder nb("random_normal_" + std::string(name(t)));
    nb.output(nb.random(opcode::random_normal, block, 1234, {256, 96}, {64, 0}));
    compare_with_cpu(rig.gpu, rig.cpu, nb.build(), {}, transcendental(t));
  }
}

} // namespace

TEST_CASE("every elementwise opcode and dtype matches the CPU device, unfused", "[gpu]") {
  require_gpu();
  elementwise_suite(false);
}

TEST_CASE("every elementwise opcode and dtype matches the CPU device, fused", "[gpu]") {
  require_gpu();
  elementwise_suite(true);
}

TEST_CASE("structural opcodes, reductions and dot match the CPU device, unfused", "[gpu]") {
  require_gpu();
  structural_suite(false);
}

TEST_CASE("structural opcodes, reductions and dot match the CPU device, fused", "[gpu]") {
  require_gpu();
  structural_suite(true);
}

TEST_CASE("random values match the CPU device, unfused and fused", "[gpu]") {
  require_gpu();
  random_suite(false);
  random_suite(true);
}
