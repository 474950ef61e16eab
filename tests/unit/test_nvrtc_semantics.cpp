// The elementwise rules of the CUDA path (devices/cuda/device_math.cuh and random_bridge.cuh, the
// code both the precompiled and the NVRTC kernels are built from) checked against the CPU device
// without a GPU: the device headers are compiled here as host C++ and applied element by element to
// the same inputs a program on a CPU device gets. Only the PTX half conversions are replaced (by
// am::float16, which rounds the same way).
#include "actormesh/build_config.hpp"

#include <catch2/catch.hpp>

#if AM_HAVE_CUDA

#include "gpu/gpu_support.hpp"

#include <bit>
#include <cmath>
#include <math.h>

#define __device__
#define __host__
#define __forceinline__ inline

inline unsigned __float_as_uint(float f) { return std::bit_cast<unsigned>(f); }
inline float __uint_as_float(unsigned u) { return std::bit_cast<float>(u); }
inline float __int_as_float(int i) { return std::bit_cast<float>(i); }
inline long long __double_as_longlong(double d) { return std::bit_cast<long long>(d); }
inline double __longlong_as_double(long long x) { return std::bit_cast<double>(x); }
unsigned short amd_host_float_to_half(float f) { return am::float16(f).bits(); }
unsigned short amd_host_double_to_half(double d) { return am::float16(d).bits(); }
float amd_host_half_to_float(unsigned short h) { return static_cast<float>(am::float16::from_bits(h)); }

#include "devices/cuda/device_math.cuh"
#include "devices/cuda/random_bridge.cuh"
#include "devices/cuda/dtype_codes.hpp"

#include <type_traits>

using namespace am;
using namespace am::testing;
using namespace std::chrono_literals;

namespace {

using am::detail::cuda::with_dtype;

template <int D>
std::vector<typename amd::dt<D>::C> load_all(const std::vector<std::byte>& bytes) {
  using S = typename amd::dt<D>::S;
  std::vector<typename amd::dt<D>::C> out(bytes.size() / sizeof(S));
  for (std::size_t i = 0; i < out.size(); ++i) {
    S s;
    std::memcpy(&s, bytes.data() + i * sizeof(S), sizeof(S));
    out[i] = amd::dt<D>::load(s);
  }
  return out;
}

template <int D, class C>
std::vector<std::byte> store_all(const std::vector<C>& values) {
  using S = typename amd::dt<D>::S;
  std::vector<std::byte> out(values.size() * sizeof(S));
  for (std::size_t i = 0; i < values.size(); ++i) {
    S s = amd::dt<D>::store(values[i]);
    std::memcpy(out.data() + i * sizeof(S), &s, sizeof(S));
  }
  return out;
}

/// What device_math.cuh gives for `op` over x (and y), as the result's bytes.
std::vector<std::byte> device_rules(opcode op, dtype t, const std::vector<std::byte>& xb,
                                    const std::vector<std::byte>& yb) {
  std::vector<std::byte> out;
  with_dtype(t, [&](auto d) {
    constexpr int D = decltype(d)::value;
    using C = typename amd::dt<D>::C;
    auto x = load_all<D>(xb);
    auto y = yb.empty() ? x : load_all<D>(yb);
    std::vector<C> r(x.size());
    std::vector<bool> cmp(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      C a = x[i], b = y[i];
      switch (op) {
        case opcode::neg: r[i] = amd::op_neg<D>(a); break;
        case opcode::abs: r[i] = amd::op_abs<D>(a); break;
        case opcode::sin: r[i] = amd::op_sin<D>(a); break;
        case opcode::cos: r[i] = amd::op_cos<D>(a); break;
        case opcode::tanh: r[i] = amd::op_tanh<D>(a); break;
        case opcode::exp: r[i] = amd::op_exp<D>(a); break;
        case opcode::log: r[i] = amd::op_log<D>(a); break;
        case opcode::sqrt: r[i] = amd::op_sqrt<D>(a); break;
        case opcode::square: r[i] = amd::op_square<D>(a); break;
        case opcode::add: r[i] = amd::op_add<D>(a, b); break;
        case opcode::subtract: r[i] = amd::op_subtract<D>(a, b); break;
        case opcode::multiply: r[i] = amd::op_multiply<D>(a, b); break;
        case opcode::divide: r[i] = amd::op_divide<D>(a, b); break;
        case opcode::floor_divide: r[i] = amd::op_floor_divide<D>(a, b); break;
        case opcode::maximum: r[i] = amd::op_maximum<D>(a, b); break;
        case opcode::minimum: r[i] = amd::op_minimum<D>(a, b); break;
        case opcode::power: r[i] = amd::op_power<D>(a, b); break;
        case opcode::equal: cmp[i] = amd::op_equal<D>(a, b); break;
        case opcode::not_equal: cmp[i] = amd::op_not_equal<D>(a, b); break;
        case opcode::less: cmp[i] = amd::op_less<D>(a, b); break;
        case opcode::less_equal: cmp[i] = amd::op_less_equal<D>(a, b); break;
        case opcode::greater: cmp[i] = amd::op_greater<D>(a, b); break;
        case opcode::greater_equal: cmp[i] = amd::op_greater_equal<D>(a, b); break;
        default: FAIL("not an elementwise opcode");
      }
    }
    if (is_comparison(op)) {
      out.resize(cmp.size());
      for (std::size_t i = 0; i < cmp.size(); ++i)
        out[i] = std::byte{static_cast<unsigned char>(cmp[i] ? 1 : 0)};
    } else {
      out = store_all<D>(r);
    }
  });
  return out;
}

/// device_math.cuh's conversion of x from `from` to `to`.
std::vector<std::byte> device_convert(dtype from, dtype to, const std::vector<std::byte>& xb) {
  std::vector<std::byte> out;
  with_dtype(from, [&](auto f) {
    constexpr int From = decltype(f)::value;
    with_dtype(to, [&](auto t) {
      constexpr int To = decltype(t)::value;
      auto x = load_all<From>(xb);
      std::vector<typename amd::dt<To>::C> r(x.size());
      for (std::size_t i = 0; i < x.size(); ++i)
        r[i] = amd::cvt<To, From>(x[i]);
      out = store_all<To>(r);
    });
  });
  return out;
}

/// The CPU device's result of a one-instruction program.
std::vector<std::byte> cpu_result(const device& cpu, const std::shared_ptr<const program>& p,
                                  const std::vector<std::vector<std::byte>>& inputs) {
  std::vector<shard_future> in;
  auto types = p->input_types();
  for (std::size_t k = 0; k < inputs.size(); ++k)
    in.push_back(upload(cpu, inputs[k], types[k]));
  return fetch(cpu, execute(cpu, p, in)[0]).get(30s);
}

bool transcendental_op(opcode op) {
  return op == opcode::sin || op == opcode::cos || op == opcode::tanh || op == opcode::exp
         || op == opcode::log || op == opcode::sqrt || op == opcode::power;
}

options cpu_only() {
  options o;
  o.cpu_devices = 1;
  o.use_gpus = false;
  return o;
}

} // namespace

TEST_CASE("device_math.cuh's operations follow the CPU path for every dtype", "[nvrtc]") {
  runtime rt(cpu_only());
  auto cpu = devices(platform::cpu)[0];
  constexpr std::int64_t n = 211;
  for (auto t : all_dtypes()) {
    value_type vt{t, {n}};
    auto xs = encode(t, sample_values(t, n, 1));
    auto ys = encode(t, sample_values(t, n, 2));
    for (int o = static_cast<int>(opcode::neg); o <= static_cast<int>(opcode::greater_equal); ++o) {
      auto op = static_cast<opcode>(o);
      program_builder b(std::string(opcode_name(op)) + "_" + std::string(name(t)));
      auto x = b.parameter(vt);
      bool two = operand_count(op) == 2;
      b.output(two ? b.binary(op, x, b.parameter(vt)) : b.unary(op, x));
      auto p = b.build();
      auto want = cpu_result(cpu, p, two ? std::vector<std::vector<std::byte>>{xs, ys}
                                         : std::vector<std::vector<std::byte>>{xs});
      auto got = device_rules(op, t, xs, two ? ys : std::vector<std::byte>{});
      auto result_type = p->output_types()[0].dtype;
      tolerance tol = transcendental_op(op) && is_floating(t) ? transcendental(t) : tolerance{};
      check_close(result_type, got, want, tol, p->name);
    }
  }
}

TEST_CASE("device_math.cuh's conversions follow the CPU path between all dtypes", "[nvrtc]") {
  runtime rt(cpu_only());
  auto cpu = devices(platform::cpu)[0];
  constexpr std::int64_t n = 97;
  for (auto from : all_dtypes()) {
    auto xs = encode(from, sample_values(from, n, 3));
    for (auto to : all_dtypes()) {
      program_builder b("convert_" + std::string(name(from)) + "_" + std::string(name(to)));
      b.output(b.convert(b.parameter({from, {n}}), to));
      check_close(to, device_convert(from, to, xs), cpu_result(cpu, b.build(), {xs}), {}, "convert");
    }
  }
  // Constants (double -> every dtype) take the same path.
  for (auto to : all_dtypes()) {
    std::vector<double> scalars{-3.5, 1e10, -1e10, 300.7, -1.0, 65519.0, 65520.0, 0.1, NAN, INFINITY};
    program_builder b("constants_" + std::string(name(to)));
    for (auto s : scalars)
      b.output(b.constant(s, {to, {1}}));
    auto p = b.build();
    auto outs = execute(cpu, p, {});
    for (std::size_t k = 0; k < scalars.size(); ++k) {
      auto want = fetch(cpu, outs[k]).get(30s);
      check_close(to, device_convert(dtype::float64, to, encode(dtype::float64, {scalars[k]})), want, {},
                  "constant " + std::to_string(scalars[k]));
    }
  }
}

TEST_CASE("random_bridge.cuh gives the CPU device's random values", "[nvrtc]") {
  runtime rt(cpu_only());
  auto cpu = devices(platform::cpu)[0];
  for (auto t : {dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64}) {
    for (bool normal : {false, true}) {
      program_builder b("random");
      shape_t global{40, 9};
      b.output(b.random(normal ? opcode::random_normal : opcode::random_uniform, {t, {10, 9}}, 77, global, {20, 0}));
      auto want = fetch(cpu, execute(cpu, b.build(), {})[0]).get(30s);
      std::vector<std::byte> got;
      with_dtype(t, [&](auto d) {
        constexpr int D = decltype(d)::value;
        std::vector<typename amd::dt<D>::C> r(90);
        for (std::size_t i = 0; i < r.size(); ++i)
          r[i] = normal ? amd::random_value<D, 1>(77, static_cast<amd::i64>(180 + i))
                        : amd::random_value<D, 0>(77, static_cast<amd::i64>(180 + i));
        got = store_all<D>(r);
      });
      check_close(t, got, want, normal ? tolerance{1e-15, 1e-15} : tolerance{}, normal ? "normal" : "uniform");
    }
  }
}

#else

TEST_CASE("device_math.cuh semantics need a CUDA build", "[nvrtc]") {
  SUCCEED("actormesh was built without CUDA");
}

#endif
