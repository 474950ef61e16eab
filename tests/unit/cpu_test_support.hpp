// Shared helpers of the CPU device tests (test_cpu_*.cpp): typed bytes, running programs through
// the runtime or the compiler directly, and float comparisons in units in the last place.
#pragma once

#include <actormesh.hpp>

#include "actormesh/actors/dtype_promotion.hpp"
#include "actormesh/actors/float16.hpp"
#include "devices/detail/buffer_pool.hpp"
#include "devices/cpu/cpu_buffer.hpp"
#include "devices/cpu/cpu_runner.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace cpu_test {

using namespace std::chrono_literals;

/// The bytes of typed values (bool as one byte each).
template <class T>
std::vector<std::byte> to_bytes(const std::vector<T>& values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  for (std::size_t i = 0; i < values.size(); ++i) {
    T v = values[i];
    std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  }
  return out;
}

/// Typed values read back from bytes.
template <class T>
std::vector<T> from_bytes(const std::vector<std::byte>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  for (std::size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    out[i] = v;
  }
  return out;
}

/// Runtime options of the tests: a few CPU devices, no GPUs.
inline am::options small_runtime(int devices = 2) {
  am::options o;
  o.cpu_devices = devices;
  o.use_gpus = false;
  return o;
}

/// Uploads `inputs` to `d`, runs `p` there and fetches every output's bytes.
inline std::vector<std::vector<std::byte>> run_on(const am::device& d, const std::shared_ptr<const am::program>& p,
                                                   const std::vector<std::vector<std::byte>>& inputs) {
  auto types = p->input_types();
  std::vector<am::shard_future> shards;
  for (std::size_t k = 0; k < inputs.size(); ++k)
    shards.push_back(am::upload(d, inputs[k], types[k]));
  auto outs = am::execute(d, p, shards);
  std::vector<std::vector<std::byte>> result;
  for (auto& o : outs)
    result.push_back(am::fetch(d, o).get(30s));
  return result;
}

/// Runs `p` with the compiler directly (no runtime), on buffers of a private pool.
inline std::vector<std::vector<std::byte>> run_direct(const am::program& p,
                                                       const std::vector<std::vector<std::byte>>& inputs,
                                                       const am::detail::compile_options& options = {}) {
  auto pool = std::make_shared<am::detail::buffer_pool>(0, 0);
  auto types = p.input_types();
  std::vector<am::buffer_ref> buffers;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    auto b = am::detail::make_cpu_buffer(types[k].dtype, types[k].shape, pool);
    REQUIRE(b->byte_size() == inputs[k].size());
    std::memcpy(b->data(), inputs[k].data(), inputs[k].size());
    buffers.push_back(b);
  }
  auto compiled = am::detail::compile_for_cpu(p, options);
  am::detail::cpu_scratch scratch;
  auto outs = am::detail::run_compiled(*compiled, p, buffers, pool, scratch);
  std::vector<std::vector<std::byte>> result;
  for (auto& o : outs) {
    std::vector<std::byte> bytes(o->byte_size());
    std::memcpy(bytes.data(), o->data(), bytes.size());
    result.push_back(std::move(bytes));
  }
  return result;
}

/// An element as double (16-bit floats widened exactly).
template <class T>
double as_double(T x) {
  return static_cast<double>(x);
}

/// True when both are NaN or both are equal (bitwise for -0/+0 too).
template <class T>
bool same_value(T a, T b) {
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, am::float16> || std::is_same_v<T, am::bfloat16>) {
    double x = as_double(a), y = as_double(b);
    if (std::isnan(x) || std::isnan(y))
      return std::isnan(x) && std::isnan(y);
    return x == y && std::signbit(x) == std::signbit(y);
  } else {
    return a == b;
  }
}

/// Distance in units in the last place of float type T between `a` and `exact`; infinite when one is
/// NaN and the other not; 0 when both are NaN or the same infinity.
template <class T>
double ulps(T a, double exact) {
  double x = as_double(a);
  if (std::isnan(x) || std::isnan(exact))
    return std::isnan(x) && std::isnan(exact) ? 0 : INFINITY;
  if (std::isinf(x) || std::isinf(exact))
    return x == exact ? 0 : INFINITY;
  int digits = std::numeric_limits<T>::digits;
  int e = 0;
  std::frexp(exact == 0 ? x : exact, &e);
  e = std::max(e, std::numeric_limits<T>::min_exponent);
  double ulp = std::ldexp(1.0, e - digits);
  return std::fabs(x - exact) / ulp;
}

} // namespace cpu_test
