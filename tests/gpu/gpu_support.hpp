// Helpers of the GPU tests: skipping without a GPU, test data for every dtype, and comparing a CUDA
// device's results with a CPU device's (the reference) element by element, with tolerances.
#pragma once

#include "support/programs.hpp"

#include "actormesh/actors/float16.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace am::testing {

/// Exits with ctest's skip code (4) when the machine it runs on has no usable GPU, printing why.
inline void require_gpu() {
  auto report = am::discover_gpus(true);
  if (report.count > 0)
    return;
  std::printf("SKIPPED: no usable GPU: %s\n", report.reason.c_str());
  std::fflush(stdout);
  std::_Exit(4);
}

/// Sets AM_CUDA_FUSION for the runtimes started while it lives (the executor reads it at start).
class fusion_setting {
public:
  explicit fusion_setting(bool on) { setenv("AM_CUDA_FUSION", on ? "on" : "off", 1); }
  ~fusion_setting() { unsetenv("AM_CUDA_FUSION"); }
};

/// Every dtype, in enum order.
inline const std::vector<dtype>& all_dtypes() {
  static const std::vector<dtype> all{dtype::bool_,   dtype::uint8,    dtype::int32,   dtype::int64,
                                      dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64};
  return all;
}

/// One element of `t` stored at `p`, as double (bool and integers exactly).
inline double element(dtype t, const std::byte* p) {
  switch (t) {
    case dtype::bool_: return *reinterpret_cast<const std::uint8_t*>(p) != 0;
    case dtype::uint8: return *reinterpret_cast<const std::uint8_t*>(p);
    case dtype::int32: { std::int32_t v; std::memcpy(&v, p, 4); return v; }
    case dtype::int64: { std::int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case dtype::float16: { std::uint16_t v; std::memcpy(&v, p, 2); return static_cast<float>(float16::from_bits(v)); }
    case dtype::bfloat16: { std::uint16_t v; std::memcpy(&v, p, 2); return static_cast<float>(bfloat16::from_bits(v)); }
    case dtype::float32: { float v; std::memcpy(&v, p, 4); return v; }
    case dtype::float64: { double v; std::memcpy(&v, p, 8); return v; }
  }
  return 0;
}

/// The bytes of `values` converted to `t` (C++ conversions; the values are chosen to fit).
inline std::vector<std::byte> encode(dtype t, const std::vector<double>& values) {
  std::vector<std::byte> out(values.size() * size_of(t));
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto* p = out.data() + i * size_of(t);
    double v = values[i];
    switch (t) {
      case dtype::bool_: { std::uint8_t b = v != 0; std::memcpy(p, &b, 1); break; }
      case dtype::uint8: { auto b = static_cast<std::uint8_t>(static_cast<int>(v) & 255); std::memcpy(p, &b, 1); break; }
      case dtype::int32: { auto b = static_cast<std::int32_t>(v); std::memcpy(p, &b, 4); break; }
      case dtype::int64: { auto b = static_cast<std::int64_t>(v); std::memcpy(p, &b, 8); break; }
      case dtype::float16: { auto b = float16(v).bits(); std::memcpy(p, &b, 2); break; }
      case dtype::bfloat16: { auto b = bfloat16(v).bits(); std::memcpy(p, &b, 2); break; }
      case dtype::float32: { auto b = static_cast<float>(v); std::memcpy(p, &b, 4); break; }
      case dtype::float64: std::memcpy(p, &v, 8); break;
    }
  }
  return out;
}

/// Test values for `t`: a spread of magnitudes and signs, zeros (division by zero), and for floats
/// NaN, infinities and values beyond the integer ranges (conversions). `seed` varies the order.
inline std::vector<double> sample_values(dtype t, std::size_t n, int seed) {
  std::vector<double> base;
  if (t == dtype::bool_)
    base = {0, 1, 1, 0, 1};
  else if (t == dtype::uint8)
    base = {0, 1, 2, 3, 7, 100, 200, 255, 13, 64};
  else if (is_integer(t))
    base = {0, 1, -1, 2, -3, 7, -100, 12345, -2147483648.0, 2147483647.0, 5, -7, 3};
  else
    base = {0.0, -0.0, 0.5, -1.25, 2.0, 3.75, -7.5, 100.25, 0.001, -0.03125, 1e5, -3e9, 7e18, -1e20,
            300.0, -129.0, NAN, INFINITY, -INFINITY, 1.5, 6.0, -2.5};
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = base[(i * 7 + static_cast<std::size_t>(seed) * 3 + i / base.size()) % base.size()];
  return out;
}

/// How closely a CUDA result must match the CPU's.
struct tolerance {
  double relative = 0; ///< 0: bit-for-bit (NaN matches any NaN)
  double absolute = 0;
};

/// Tolerance of transcendental results of `t` (both sides are within a few ulp of the truth).
inline tolerance transcendental(dtype t) {
  switch (t) {
    case dtype::float16: return {2e-3, 1e-4};
    case dtype::bfloat16: return {1.6e-2, 1e-3};
    case dtype::float32: return {1e-5, 1e-6};
    case dtype::float64: return {1e-12, 1e-14};
    default: return {};
  }
}

/// Checks two fetched results of dtype `t` element by element; reports the first few differences.
inline void check_close(dtype t, const std::vector<std::byte>& got, const std::vector<std::byte>& want,
                        tolerance tol, const std::string& what) {
  INFO(what << " (" << name(t) << ")");
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0;
  std::string first;
  auto n = got.size() / size_of(t);
  for (std::size_t i = 0; i < n; ++i) {
    double a = element(t, got.data() + i * size_of(t));
    double b = element(t, want.data() + i * size_of(t));
    bool ok = (std::isnan(a) && std::isnan(b)) || a == b
              || (tol.relative > 0 && std::isfinite(a) && std::isfinite(b)
                  && std::fabs(a - b) <= tol.absolute + tol.relative * std::fabs(b));
    if (!ok && bad++ < 5)
      first += " [" + std::to_string(i) + "] cuda " + std::to_string(a) + " cpu " + std::to_string(b) + ";";
  }
  INFO("mismatches: " << bad << first);
  CHECK(bad == 0);
}

/// Runs `p` with the same inputs on `gpu` and on `cpu` and compares every output.
inline void compare_with_cpu(const device& gpu, const device& cpu, const std::shared_ptr<const program>& p,
                             const std::vector<std::vector<std::byte>>& inputs, tolerance tol) {
  using namespace std::chrono_literals;
  std::vector<shard_future> on_gpu, on_cpu;
  auto types = p->input_types();
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    on_gpu.push_back(upload(gpu, inputs[k], types[k]));
    on_cpu.push_back(upload(cpu, inputs[k], types[k]));
  }
  auto got = execute(gpu, p, on_gpu);
  auto want = execute(cpu, p, on_cpu);
  auto out_types = p->output_types();
  for (std::size_t k = 0; k < got.size(); ++k)
    check_close(out_types[k].dtype, fetch(gpu, got[k]).get(60s), fetch(cpu, want[k]).get(60s), tol,
                p->name + " output " + std::to_string(k));
}

} // namespace am::testing
