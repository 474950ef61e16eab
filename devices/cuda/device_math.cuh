// Elementwise semantics of the per-shard opcodes as CUDA device code, written ONCE for both CUDA
// paths: the precompiled per-instruction kernels (#included by cuda_kernels.cu) and the fused kernels
// generated at run time (embedded into every NVRTC program as text). It therefore includes nothing:
// NVRTC has no standard headers. The rules are the CPU path's (devices/detail/dtype_dispatch.hpp):
// 16-bit floats compute in float and round after every operation, bool arithmetic is int
// arithmetic read back as `!= 0`, integers wrap, integer division by zero gives 0 (and the minimum
// divided by -1 gives the minimum), float -> int64 gives INT64_MIN for NaN and out-of-range values,
// float -> int32/uint8 goes through int32 (INT32_MIN, then wrapped), max/min propagate NaN, and
// conversions to float16 round once from double (bfloat16 goes through float).
//
// Dtype codes are the values of am::dtype: 0 bool, 1 uint8, 2 int32, 3 int64, 4 float16,
// 5 bfloat16, 6 float32, 7 float64.
#pragma once

#if !defined(__CUDACC__)
// Compiled as plain host C++ (tests/unit/test_nvrtc_semantics.cpp checks these rules against the
// CPU path without a GPU): the includer defines the execution-space macros, the CUDA intrinsics
// used here, and these three stand-ins for the PTX conversions.
unsigned short amd_host_float_to_half(float f);
unsigned short amd_host_double_to_half(double d);
float amd_host_half_to_float(unsigned short h);
#endif

namespace amd {

typedef long long i64;
typedef unsigned long long u64;

enum kind_t { k_bool, k_unsigned, k_signed, k_float };

// ---- 16-bit float storage ------------------------------------------------------------------------

__device__ __forceinline__ float half_bits_to_float(unsigned short h) {
#if defined(__CUDACC__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  return amd_host_half_to_float(h);
#endif
}

/// Round to nearest even; NaN keeps sign and top payload bits as numpy does (and the CPU path).
__device__ __forceinline__ unsigned short float_to_half_bits(float f) {
  unsigned x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    unsigned payload = (x & 0x7fffffu) >> 13;
    return (unsigned short)(((x >> 16) & 0x8000u) | 0x7c00u | (payload == 0 ? 1u : payload));
  }
#if defined(__CUDACC__)
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  return amd_host_float_to_half(f);
#endif
}

/// Rounds a double to half directly (not through float), as numpy and the CPU path do; NaN keeps
/// its sign and top 10 payload bits.
__device__ __forceinline__ unsigned short double_to_half_bits(double d) {
  u64 x = (u64)__double_as_longlong(d);
  if ((x & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) {
    unsigned payload = (unsigned)((x & 0xfffffffffffffull) >> 42);
    return (unsigned short)(((x >> 48) & 0x8000u) | 0x7c00u | (payload == 0 ? 1u : payload));
  }
#if defined(__CUDACC__)
  unsigned short h;
  asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(d));
  return h;
#else
  return amd_host_double_to_half(d);
#endif
}

__device__ __forceinline__ float bf16_bits_to_float(unsigned short b) {
  return __uint_as_float(((unsigned)b) << 16);
}

/// Round to nearest even; NaN becomes the quiet NaN 0x7fc0 with its sign, as ml_dtypes does.
__device__ __forceinline__ unsigned short float_to_bf16_bits(float f) {
  unsigned x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (unsigned short)(((x >> 16) & 0x8000u) | 0x7fc0u);
  return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// ---- dtype traits: storage type S, compute type C, load/store, rounding after each operation -----

template <int D> struct dt;

template <> struct dt<0> {
  typedef unsigned char S;
  typedef bool C;
  static const int kind = k_bool;
  static __device__ __forceinline__ C load(S s) { return s != 0; }
  static __device__ __forceinline__ S store(C c) { return c ? 1 : 0; }
  static __device__ __forceinline__ C fix(C c) { return c; }
};

template <> struct dt<1> {
  typedef unsigned char S;
  typedef unsigned char C;
  static const int kind = k_unsigned;
  static __device__ __forceinline__ C load(S s) { return s; }
  static __device__ __forceinline__ S store(C c) { return c; }
  static __device__ __forceinline__ C fix(C c) { return c; }
};

template <> struct dt<2> {
  typedef int S;
  typedef int C;
  static const int kind = k_signed;
  static __device__ __forceinline__ C load(S s) { return s; }
  static __device__ __forceinline__ S store(C c) { return c; }
  static __device__ __forceinline__ C fix(C c) { return c; }
};

template <> struct dt<3> {
  typedef i64 S;
  typedef i64 C;
  static const int kind = k_signed;
  static __device__ __forceinline__ C load(S s) { return s; }
  static __device__ __forceinline__ S store(C c) { return c; }
  static __device__ __forceinline__ C fix(C c) { return c; }
};

template <> struct dt<4> {
  typedef unsigned short S;
  typedef float C;
  static const int kind = k_float;
  static __device__ __forceinline__ C load(S s) { return half_bits_to_float(s); }
  static __device__ __forceinline__ S store(C c) { return float_to_half_bits(c); }
  static __device__ __forceinline__ C fix(C c) { return half_bits_to_float(float_to_half_bits(c)); }
};

template <> struct dt<5> {
  typedef unsigned short S;
  typedef float C;
  static const int kind = k_float;
  static __device__ __forceinline__ C load(S s) { return bf16_bits_to_float(s); }
  static __device__ __forceinline__ S store(C c) { return float_to_bf16_bits(c); }
  static __device__ __forceinline__ C fix(C c) { return bf16_bits_to_float(float_to_bf16_bits(c)); }
};

template <> struct dt<6> {
  typedef float S;
  typedef float C;
  static const int kind = k_float;
  static __device__ __forceinline__ C load(S s) { return s; }
  static __device__ __forceinline__ S store(C c) { return c; }
  static __device__ __forceinline__ C fix(C c) { return c; }
};

template <> struct dt<7> {
  typedef double S;
  typedef double C;
  static const int kind = k_float;
  static __device__ __forceinline__ C load(S s) { return s; }
  static __device__ __forceinline__ S store(C c) { return c; }
  static __device__ __forceinline__ C fix(C c) { return c; }
};

// ---- conversions ---------------------------------------------------------------------------------

/// Float to integer as numpy on x86-64: int64 directly, int32 and uint8 through int32; NaN and
/// out-of-range values give the minimum of the type converted through.
template <int To>
__device__ __forceinline__ typename dt<To>::C float_to_int(double v) {
  typedef typename dt<To>::C C;
  if constexpr (To == 3) {
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
      return (C)(-9223372036854775807LL - 1);
    return (C)v;
  } else {
    int i = (v > -2147483649.0 && v < 2147483648.0) ? (int)v : (int)(-2147483647 - 1);
    return (C)i;
  }
}

/// Converts a compute value of dtype From to the compute value of dtype To (the CPU path's
/// am::convert_element).
template <int To, int From>
__device__ __forceinline__ typename dt<To>::C cvt(typename dt<From>::C x) {
  typedef typename dt<To>::C C;
  if constexpr (To == From) {
    return x;
  } else if constexpr (To == 0) {
    return x != 0;
  } else if constexpr (dt<To>::kind != k_float && dt<From>::kind == k_float) {
    return float_to_int<To>((double)x);
  } else if constexpr (To == 4) {
    if constexpr (From == 4 || From == 5 || From == 6)
      return dt<4>::fix((float)x);
    else
      return half_bits_to_float(double_to_half_bits((double)x)); // doubles and integers
  } else if constexpr (To == 5) {
    return dt<5>::fix((float)x); // bfloat16 always goes through float
  } else {
    return (C)x;
  }
}

// ---- integer helpers -----------------------------------------------------------------------------

/// Wraps an unsigned 64-bit result into dtype D's compute type.
template <int D>
__device__ __forceinline__ typename dt<D>::C wrap(u64 v) {
  return (typename dt<D>::C)v;
}

// ---- one-operand operations ----------------------------------------------------------------------

template <int D>
__device__ __forceinline__ typename dt<D>::C op_neg(typename dt<D>::C a) {
  if constexpr (dt<D>::kind == k_bool) return a;
  else if constexpr (dt<D>::kind == k_float) return -a;
  else return wrap<D>(0ull - (u64)a);
}

template <int D>
__device__ __forceinline__ typename dt<D>::C op_abs(typename dt<D>::C a) {
  if constexpr (D == 7) return fabs(a);
  else if constexpr (dt<D>::kind == k_float) return fabsf(a);
  else if constexpr (dt<D>::kind == k_signed) return a < 0 ? wrap<D>(0ull - (u64)a) : a;
  else return a;
}

template <int D>
__device__ __forceinline__ typename dt<D>::C op_square(typename dt<D>::C a) {
  if constexpr (dt<D>::kind == k_bool) return a;
  else if constexpr (dt<D>::kind == k_float) return dt<D>::fix(a * a);
  else return wrap<D>((u64)a * (u64)a);
}

/// Transcendental functions: float math for float32 and the 16-bit floats (rounded back), double
/// math for float64, and double math converted back with the conversion rules for integers and
/// bool (so sin(true) is true: 0.84 != 0).
#define AMD_MATH1(NAME, FF, DF)                                                                \
  template <int D>                                                                             \
  __device__ __forceinline__ typename dt<D>::C NAME(typename dt<D>::C a) {                     \
    if constexpr (D == 7) return DF(a);                                                        \
    else if constexpr (dt<D>::kind == k_float) return dt<D>::fix(FF(a));                       \
    else return cvt<D, 7>(DF((double)a)); /* integers and bool: the conversion rules */       \
  }
AMD_MATH1(op_sin, sinf, sin)
AMD_MATH1(op_cos, cosf, cos)
AMD_MATH1(op_tanh, tanhf, tanh)
AMD_MATH1(op_exp, expf, exp)
AMD_MATH1(op_log, logf, log)
AMD_MATH1(op_sqrt, sqrtf, sqrt)
#undef AMD_MATH1

// ---- two-operand operations ----------------------------------------------------------------------

template <int D>
__device__ __forceinline__ typename dt<D>::C op_add(typename dt<D>::C a, typename dt<D>::C b) {
  if constexpr (dt<D>::kind == k_bool) return a || b;
  else if constexpr (dt<D>::kind == k_float) return dt<D>::fix(a + b);
  else return wrap<D>((u64)a + (u64)b);
}

template <int D>
__device__ __forceinline__ typename dt<D>::C op_subtract(typename dt<D>::C a, typename dt<D>::C b) {
  if constexpr (dt<D>::kind == k_bool) return a != b;
  else if constexpr (dt<D>::kind == k_float) return dt<D>::fix(a - b);
  else return wrap<D>((u64)a - (u64)b);
}

template <int D>
__device__ __forceinline__ typename dt<D>::C op_multiply(typename dt<D>::C a, typename dt<D>::C b) {
  if constexpr (dt<D>::kind == k_bool) return a && b;
  else if constexpr (dt<D>::kind == k_float) return dt<D>::fix(a * b);
  else return wrap<D>((u64)a * (u64)b);
}

template <int D>
__device__ __forceinline__ typename dt<D>::C op_divide(typename dt<D>::C a, typename dt<D>::C b) {
  typedef typename dt<D>::C C;
  if constexpr (dt<D>::kind == k_bool) return b && a;
  else if constexpr (dt<D>::kind == k_float) return dt<D>::fix(a / b);
  else if constexpr (dt<D>::kind == k_signed) {
    if (b == 0) return 0;
    if (b == -1) return wrap<D>(0ull - (u64)a);  // the minimum / -1 wraps instead of trapping
    return (C)(a / b);
  } else return b == 0 ? (C)0 : (C)(a / b);
}

/// x // y as jnp.floor_divide (the CPU path's rule: devices/cpu/floor_divide_element.inc). Floats:
/// mod = fmod; ((b == 0 ? a : a - mod) / b), one less where mod != 0 and sign(mod) != sign(b),
/// rounded half away from zero; 16-bit floats round after every step, as XLA and the CPU path.
/// Signed: truncated quotient, one less where the signs differ and the remainder is not 0;
/// x // 0 is -2, 0 // 0 is -1, the minimum // -1 the minimum. Unsigned: x // 0 is all ones. Bool
/// (0/1 integers read back as != 0): b ? a : true.
template <int D>
__device__ __forceinline__ typename dt<D>::C op_floor_divide(typename dt<D>::C a, typename dt<D>::C b) {
  typedef typename dt<D>::C C;
  if constexpr (dt<D>::kind == k_bool) return b ? a : true;
  else if constexpr (dt<D>::kind == k_float) {
    C mod;
    if constexpr (D == 7) mod = fmod(a, b);
    else mod = dt<D>::fix(fmodf(a, b));
    C div = dt<D>::fix((b == 0 ? a : dt<D>::fix(a - mod)) / b);
    C sb = b > 0 ? (C)1 : (b < 0 ? (C)-1 : b), sm = mod > 0 ? (C)1 : (mod < 0 ? (C)-1 : mod);
    if (mod != 0 && sb != sm) div = dt<D>::fix(div - (C)1);
    if constexpr (D == 7) return round(div);
    else return dt<D>::fix(roundf(div));
  } else if constexpr (dt<D>::kind == k_signed) {
    if (b == 0) return a == 0 ? (C)-1 : (C)-2;
    if (b == -1) return wrap<D>(0ull - (u64)a);
    C q = (C)(a / b);
    return (a % b != 0 && ((a < 0) != (b < 0))) ? (C)(q - 1) : q;
  } else return b == 0 ? (C)~0ull : (C)(a / b);
}

/// a >= b, or a is NaN ? a : b (the CPU path's expression: NaN in either operand gives NaN, and
/// equal operands give a).
template <int D>
__device__ __forceinline__ typename dt<D>::C op_maximum(typename dt<D>::C a, typename dt<D>::C b) {
  return (a >= b || a != a) ? a : b;
}

/// a <= b, or a is NaN ? a : b.
template <int D>
__device__ __forceinline__ typename dt<D>::C op_minimum(typename dt<D>::C a, typename dt<D>::C b) {
  return (a <= b || a != a) ? a : b;
}

/// Floats: pow. Integers: exact wrapping power; a negative exponent gives 0 except for bases 1
/// and -1 (XLA's rule). Bool: a || !b (as 0/1 integers).
template <int D>
__device__ __forceinline__ typename dt<D>::C op_power(typename dt<D>::C a, typename dt<D>::C b) {
  typedef typename dt<D>::C C;
  if constexpr (dt<D>::kind == k_bool) return a || !b;
  else if constexpr (D == 7) return pow(a, b);
  else if constexpr (dt<D>::kind == k_float) return dt<D>::fix(powf(a, b));
  else {
    if constexpr (dt<D>::kind == k_signed) {
      if (b < 0) return a == 1 ? (C)1 : (a == -1 ? (C)((b & 1) ? -1 : 1) : (C)0);
    }
    u64 result = 1, base = (u64)a;
    for (u64 e = (u64)b; e != 0; e >>= 1) {
      if (e & 1) result *= base;
      base *= base;
    }
    return wrap<D>(result);
  }
}

template <int D> __device__ __forceinline__ bool op_equal(typename dt<D>::C a, typename dt<D>::C b) { return a == b; }
template <int D> __device__ __forceinline__ bool op_not_equal(typename dt<D>::C a, typename dt<D>::C b) { return a != b; }
template <int D> __device__ __forceinline__ bool op_less(typename dt<D>::C a, typename dt<D>::C b) { return a < b; }
template <int D> __device__ __forceinline__ bool op_less_equal(typename dt<D>::C a, typename dt<D>::C b) { return a <= b; }
template <int D> __device__ __forceinline__ bool op_greater(typename dt<D>::C a, typename dt<D>::C b) { return a > b; }
template <int D> __device__ __forceinline__ bool op_greater_equal(typename dt<D>::C a, typename dt<D>::C b) { return a >= b; }

// ---- reductions ----------------------------------------------------------------------------------

/// Accumulator of reductions and dot: float for the 16-bit floats, int for bool, else the type.
template <int D> struct acc { typedef typename dt<D>::C A; };
template <> struct acc<0> { typedef int A; };

} // namespace amd
