#include "devices/cpu/cpu_kernels.hpp"

#include <cstdlib>
#include <cstring>

namespace am::detail {

namespace {

/// `base` with every entry `over` provides replaced by it.
kernel_table merge(const kernel_table& base, const kernel_table& over) {
  kernel_table t = base;
  for (int op = 0; op < opcode_count; ++op)
    for (std::size_t d = 0; d < dtype_count; ++d)
      if (over.elementwise[op][d])
        t.elementwise[op][d] = over.elementwise[op][d];
  for (std::size_t a = 0; a < dtype_count; ++a) {
    for (std::size_t b = 0; b < dtype_count; ++b)
      if (over.convert[a][b])
        t.convert[a][b] = over.convert[a][b];
    if (over.dot[a])
      t.dot[a] = over.dot[a];
    for (int r = 0; r < 2; ++r)
      if (over.random[r][a])
        t.random[r][a] = over.random[r][a];
    for (int r = 0; r < 3; ++r) {
      if (over.reduce_run[r][a])
        t.reduce_run[r][a] = over.reduce_run[r][a];
      if (over.reduce_into[r][a])
        t.reduce_into[r][a] = over.reduce_into[r][a];
    }
  }
  return t;
}

cpu_isa detected_isa() noexcept {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return cpu_isa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return cpu_isa::avx2;
  return cpu_isa::scalar;
}

} // namespace

bool isa_supported(cpu_isa isa) noexcept {
  static const cpu_isa best = detected_isa();
  return static_cast<int>(isa) <= static_cast<int>(best);
}

cpu_isa preferred_isa() noexcept {
  static const cpu_isa chosen = [] {
    cpu_isa isa = detected_isa();
    if (const char* want = std::getenv("AM_CPU_ISA")) {
      if (std::strcmp(want, "scalar") == 0)
        isa = cpu_isa::scalar;
      else if (std::strcmp(want, "avx2") == 0 && isa_supported(cpu_isa::avx2))
        isa = cpu_isa::avx2;
    }
    return isa;
  }();
  return chosen;
}

std::string_view isa_name(cpu_isa isa) noexcept {
  switch (isa) {
    case cpu_isa::avx2: return "avx2";
    case cpu_isa::avx512: return "avx512";
    default: return "scalar";
  }
}

const kernel_table& kernels(cpu_isa isa) {
  switch (isa) {
    case cpu_isa::avx512: {
      static const kernel_table t = merge(merge(scalar_kernels(), avx2_kernels()), avx512_kernels());
      return t;
    }
    case cpu_isa::avx2: {
      static const kernel_table t = merge(scalar_kernels(), avx2_kernels());
      return t;
    }
    default: return scalar_kernels();
  }
}

} // namespace am::detail
