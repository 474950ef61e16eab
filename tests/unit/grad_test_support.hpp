// Shared helpers of the grad, vmap and pmap tests: deterministic float64 inputs, calling a test
// function of one or two arrays, and gradients by central finite differences.
#pragma once

#include "support/arrays.hpp"

#include "actormesh/parallel/parallel.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <type_traits>
#include <vector>

namespace grad_test {

using namespace am;

/// Deterministic values in [lo, hi] (a simple LCG), float64.
inline host_array sample(shape_t shape, unsigned seed, double lo = -1.0, double hi = 1.0) {
  auto n = element_count(shape);
  std::vector<double> v(static_cast<std::size_t>(n));
  std::uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = lo + (hi - lo) * static_cast<double>(s >> 11) / static_cast<double>(1ull << 53);
  }
  return host_array::from_vector(v, shape);
}

/// f applied to one or two arrays, as the vector of its arguments.
template <class F>
array call(const F& f, const std::vector<array>& a) {
  if constexpr (std::is_invocable_v<const F&, const array&>)
    return f(a.at(0));
  else
    return f(a.at(0), a.at(1));
}

/// The analytic gradients of f with respect to every argument.
template <class F>
std::vector<array> analytic(const F& f, const std::vector<array>& a) {
  if constexpr (std::is_invocable_v<const F&, const array&>)
    return {grad(f)(a.at(0))};
  else
    return grad(f, {0, 1})(a.at(0), a.at(1));
}

/// d f / d args[k] by central differences with step h (f evaluated eagerly).
template <class F>
std::vector<double> numeric(const F& f, const std::vector<host_array>& args, std::size_t k,
                            const sharding_ptr& layout, double h = 1e-6) {
  auto eval = [&](const host_array& changed) {
    std::vector<array> a;
    for (std::size_t j = 0; j < args.size(); ++j)
      a.push_back(device_put(j == k ? changed : args[j], layout));
    return call(f, a).to_host().template item<double>();
  };
  std::vector<double> out;
  auto base = args[k].to_vector<double>();
  for (std::size_t i = 0; i < base.size(); ++i) {
    auto plus = base, minus = base;
    plus[i] += h;
    minus[i] -= h;
    out.push_back((eval(host_array::from_vector(plus, args[k].shape()))
                   - eval(host_array::from_vector(minus, args[k].shape()))) / (2 * h));
  }
  return out;
}

/// Checks every gradient of f at `args` (float64, laid out by `layout`) against central differences.
template <class F>
void check_gradients(const F& f, const std::vector<host_array>& args, const sharding_ptr& layout,
                     double rtol = 1e-5, double atol = 1e-6) {
  std::vector<array> a;
  for (auto& h : args)
    a.push_back(device_put(h, layout));
  auto grads = analytic(f, a);
  REQUIRE(grads.size() == args.size());
  for (std::size_t k = 0; k < args.size(); ++k) {
    INFO("argument " << k);
    CHECK(grads[k].shape() == args[k].shape());
    CHECK(grads[k].dtype() == dtype::float64);
    auto expected = numeric(f, args, k, layout);
    auto got = am::testing::values(grads[k]);
    INFO("analytic: " << Catch::Detail::stringify(got));
    INFO("numeric:  " << Catch::Detail::stringify(expected));
    CHECK(am::testing::all_close(got, expected, rtol, atol));
  }
}

} // namespace grad_test
