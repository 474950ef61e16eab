// The baseline kernels (x86-64 without extensions): every dtype, float16/bfloat16 included, with libm
// for transcendentals. The AVX2 / AVX-512 units override what they can do faster.
#include "devices/cpu/cpu_kernels.hpp"
#include "devices/cpu/cpu_sources.hpp"
#include "devices/detail/random_counter.hpp"

#include "actormesh/actors/float16.hpp"

#include <math.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace am::detail {

namespace {

#define AM_KERNELS_HALF 1
#include "devices/cpu/cpu_kernels_impl.inc"
#include "devices/cpu/cpu_unravel.inc"
#include "devices/cpu/cpu_random_kernels.inc"
#include "devices/cpu/cpu_kernels_tables.inc"

} // namespace

const kernel_table& scalar_kernels() {
  static const kernel_table table = build_table();
  return table;
}

} // namespace am::detail
