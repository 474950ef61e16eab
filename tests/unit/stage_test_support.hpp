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

/// Whether every local shard of `r` (on the 8 devices) lies in one buffer: the same memory for all
/// (`blocks` false: a replicated stage result) or, with `blocks`, each shard the block at its
/// position along dim 0 (a scatter stage's).
inline bool shards_in_one_buffer(const am::array& r, bool blocks) {
  auto shards = r.addressable_shards();
  if (shards.size() != 8)
    return false;
  auto base = static_cast<const std::byte*>(shards[0].data.get()->data());
  auto block = shards[0].data.get()->byte_size();
  for (auto& s : shards) {
    auto b = s.data.get();
    auto position = blocks ? static_cast<std::size_t>(s.index.at(0).start) : 0;
    if (b->data() != base + position * block || b->device_id() != s.device.id)
      return false;
  }
  return true;
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
