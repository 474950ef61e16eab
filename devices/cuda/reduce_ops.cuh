// How reductions and dot accumulate, per dtype code D (shared by cuda_reduce.cu and cuda_dot.cu):
// sums of 16-bit floats and float32 in float, float64 in double, integers in wrapping 64-bit
// arithmetic cut to the type at the end, bool as a count read back as `!= 0`; max/min in the
// compute type with device_math.cuh's NaN-propagating rules.
#pragma once

#include "devices/cuda/kernel_common.cuh"

namespace am::detail::cuda {

/// The accumulator of sums and products of dtype code D.
template <int D> struct sum_acc { typedef amd::u64 A; };
template <> struct sum_acc<4> { typedef float A; };
template <> struct sum_acc<5> { typedef float A; };
template <> struct sum_acc<6> { typedef float A; };
template <> struct sum_acc<7> { typedef double A; };

/// Sum: widen, add, round (or wrap) once at the end.
template <int D> struct sum_op {
  typedef typename sum_acc<D>::A A;
  static __device__ __forceinline__ A init() { return A(0); }
  static __device__ __forceinline__ A from(compute_t<D> c) { return (A)c; }
  static __device__ __forceinline__ A combine(A a, A b) { return a + b; }
  static __device__ __forceinline__ compute_t<D> finish(A a) {
    if constexpr (D == 0) return a != 0;
    else if constexpr (amd::dt<D>::kind == amd::k_float) return amd::dt<D>::fix((compute_t<D>)a);
    else return amd::wrap<D>(a);
  }
};

/// The lowest and highest values of dtype code D (infinities for floats).
template <int D> struct bounds;
template <> struct bounds<0> { static __device__ bool lo() { return false; } static __device__ bool hi() { return true; } };
template <> struct bounds<1> { static __device__ unsigned char lo() { return 0; } static __device__ unsigned char hi() { return 255; } };
template <> struct bounds<2> { static __device__ int lo() { return -2147483647 - 1; } static __device__ int hi() { return 2147483647; } };
template <> struct bounds<3> { static __device__ amd::i64 lo() { return -9223372036854775807LL - 1; } static __device__ amd::i64 hi() { return 9223372036854775807LL; } };
template <> struct bounds<4> { static __device__ float lo() { return -__int_as_float(0x7f800000); } static __device__ float hi() { return __int_as_float(0x7f800000); } };
template <> struct bounds<5> : bounds<4> {};
template <> struct bounds<6> : bounds<4> {};
template <> struct bounds<7> { static __device__ double lo() { return -__longlong_as_double(0x7ff0000000000000LL); } static __device__ double hi() { return __longlong_as_double(0x7ff0000000000000LL); } };

/// Max (MAX = 1) or min (MAX = 0), NaN-propagating for floats.
template <int D, int MAX> struct extreme_op {
  typedef compute_t<D> A;
  static __device__ __forceinline__ A init() { return MAX ? bounds<D>::lo() : bounds<D>::hi(); }
  static __device__ __forceinline__ A from(compute_t<D> c) { return c; }
  static __device__ __forceinline__ A combine(A a, A b) {
    return MAX ? amd::op_maximum<D>(a, b) : amd::op_minimum<D>(a, b);
  }
  static __device__ __forceinline__ compute_t<D> finish(A a) { return a; }
};

} // namespace am::detail::cuda
