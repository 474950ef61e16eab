// Helpers of the tests of pmap's collective stages: the 8 CPU devices, an array's bits, the
// one-plan path for comparison.
#pragma once

#include "grad_test_support.hpp"

#include "parallel/detail/staged_pmap.hpp"

#include <cstring>
#include <vector>

namespace stage_test {

/// The 8 CPU devices of the test's runtime.
inline std::vector<am::device> eight() { return am::devices(am::platform::cpu); }

/// Bytes of every element, to compare bit for bit (NaNs included).
inline std::vector<unsigned char> bits(const am::array& a) {
  auto h = a.to_host();
  std::vector<unsigned char> out(h.nbytes());
  std::memcpy(out.data(), h.bytes().data(), out.size());
  return out;
}

/// Runs `f` with the staged path off (one plan, as inside a trace), restoring it after.
template <class F>
auto one_plan(const F& f) {
  am::detail::set_stages_enabled(false);
  struct restore {
    ~restore() { am::detail::set_stages_enabled(true); }
  } r;
  return f();
}

/// `f` under pmap over 8 devices with stages and as one plan.
template <class F>
void check_same_as_one_plan(const F& f, const am::array& x) {
  auto mapped = am::pmap(f, "i");
  auto staged = bits(mapped(x));
  CHECK(staged == bits(one_plan([&] { return mapped(x); })));
}

} // namespace stage_test
