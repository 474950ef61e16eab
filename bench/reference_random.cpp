// Picks the peers' loops of the widest instruction set this CPU runs (reference_random.inc).
#include "reference_random.hpp"

namespace am::bench {

#define AM_DECLARE_REFERENCE_LOOPS(isa)                                                               \
  namespace isa {                                                                                      \
  void uniform_float32_loop(std::uint64_t key, float* out, std::int64_t begin, std::int64_t end);     \
  void normal_float32_loop(std::uint64_t key, float* out, std::int64_t begin, std::int64_t end);      \
  }
AM_DECLARE_REFERENCE_LOOPS(scalar)
AM_DECLARE_REFERENCE_LOOPS(avx2)
AM_DECLARE_REFERENCE_LOOPS(avx512)
#undef AM_DECLARE_REFERENCE_LOOPS

namespace {
/// 2 with AVX-512F, 1 with AVX2 and FMA, else 0.
int widest() {
  if (__builtin_cpu_supports("avx512f"))
    return 2;
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
}
} // namespace

void uniform_float32_loop(std::uint64_t key, float* out, std::int64_t begin, std::int64_t end) {
  static const auto loop = widest() == 2 ? avx512::uniform_float32_loop
                           : widest() == 1 ? avx2::uniform_float32_loop
                                           : scalar::uniform_float32_loop;
  loop(key, out, begin, end);
}

void normal_float32_loop(std::uint64_t key, float* out, std::int64_t begin, std::int64_t end) {
  static const auto loop = widest() == 2 ? avx512::normal_float32_loop
                           : widest() == 1 ? avx2::normal_float32_loop
                                           : scalar::normal_float32_loop;
  loop(key, out, begin, end);
}

} // namespace am::bench
