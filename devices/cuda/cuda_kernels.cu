// Elementwise CUDA kernels for the per-shard program instructions: one grid-stride kernel per
// instruction, templated on the element type. Arithmetic of 16-bit floats happens in float and of
// bool in int, like the CPU path.
#include "devices/cuda/cuda_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <type_traits>

namespace am::detail::cuda {

namespace {

template <class T> struct compute { using type = T; };
template <> struct compute<bool> { using type = int; };
template <> struct compute<__half> { using type = float; };
template <> struct compute<__nv_bfloat16> { using type = float; };
template <class T> using compute_t = typename compute<T>::type;

template <class T>
__device__ compute_t<T> load(T v) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(v);
  else return static_cast<compute_t<T>>(v);
}

template <class T, class C>
__device__ T store(C v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bool>) return v != C(0);
  else if constexpr (std::is_integral_v<T> && !std::is_integral_v<C>) {
    // NaN and out-of-range values give the integer minimum, as x86 does on the CPU path.
    using wide = std::conditional_t<std::is_same_v<T, std::uint8_t>, long long, T>;
    double d = static_cast<double>(v);
    double lo = static_cast<double>(std::numeric_limits<wide>::min());
    if (!(d >= lo && d < -lo)) return static_cast<T>(std::numeric_limits<wide>::min());
    return static_cast<T>(static_cast<wide>(d));
  } else return static_cast<T>(v);
}

constexpr int block = 256;

int grid_for(std::int64_t n) {
  std::int64_t blocks = (n + block - 1) / block;
  return static_cast<int>(blocks < 65535 ? (blocks < 1 ? 1 : blocks) : 65535);
}

template <class T>
__global__ void fill_kernel(T* dst, std::int64_t n, double value) {
  for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    dst[i] = store<T>(value);
}

template <class T>
__global__ void iota_kernel(T* dst, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    dst[i] = store<T>(i);
}

template <class To, class From>
__global__ void convert_kernel(To* dst, const From* src, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    dst[i] = store<To>(load(src[i]));
}

template <class T>
__global__ void unary_kernel(opcode op, T* dst, const T* x, std::int64_t n) {
  using C = compute_t<T>;
  for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    C a = load(x[i]);
    if (op == opcode::neg)
      dst[i] = store<T>(static_cast<C>(-a));
    else if constexpr (std::is_unsigned_v<C>)
      dst[i] = store<T>(a);
    else
      dst[i] = store<T>(a < C(0) ? static_cast<C>(-a) : a);
  }
}

template <class T>
__global__ void binary_kernel(opcode op, T* dst, const T* x, const T* y, std::int64_t n) {
  using C = compute_t<T>;
  for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    C a = load(x[i]), b = load(y[i]), r{};
    switch (op) {
      case opcode::add: r = a + b; break;
      case opcode::subtract: r = a - b; break;
      case opcode::multiply: r = a * b; break;
      case opcode::divide:
        if constexpr (std::is_integral_v<C>) r = b == 0 ? C(0) : static_cast<C>(a / b);
        else r = a / b;
        break;
      case opcode::maximum:
        if constexpr (std::is_integral_v<C>) r = a > b ? a : b;
        else r = (isnan(a) || isnan(b)) ? a + b : (a > b ? a : b);
        break;
      case opcode::minimum:
        if constexpr (std::is_integral_v<C>) r = a < b ? a : b;
        else r = (isnan(a) || isnan(b)) ? a + b : (a < b ? a : b);
        break;
      default: break;
    }
    dst[i] = store<T>(r);
  }
}

template <class F>
void visit(dtype t, F&& f) {
  switch (t) {
    case dtype::bool_: f(static_cast<bool*>(nullptr)); break;
    case dtype::uint8: f(static_cast<std::uint8_t*>(nullptr)); break;
    case dtype::int32: f(static_cast<std::int32_t*>(nullptr)); break;
    case dtype::int64: f(static_cast<std::int64_t*>(nullptr)); break;
    case dtype::float16: f(static_cast<__half*>(nullptr)); break;
    case dtype::bfloat16: f(static_cast<__nv_bfloat16*>(nullptr)); break;
    case dtype::float32: f(static_cast<float*>(nullptr)); break;
    case dtype::float64: f(static_cast<double*>(nullptr)); break;
  }
}

cudaStream_t as_stream(stream_handle s) {
  return static_cast<cudaStream_t>(s);
}

} // namespace

void fill(void* dst, dtype type, std::int64_t n, double value, stream_handle stream) {
  visit(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_kernel<T><<<grid_for(n), block, 0, as_stream(stream)>>>(static_cast<T*>(dst), n, value);
  });
}

void iota(void* dst, dtype type, std::int64_t n, stream_handle stream) {
  visit(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    iota_kernel<T><<<grid_for(n), block, 0, as_stream(stream)>>>(static_cast<T*>(dst), n);
  });
}

void convert(void* dst, dtype to, const void* src, dtype from, std::int64_t n, stream_handle stream) {
  visit(to, [&](auto* to_tag) {
    using To = std::remove_pointer_t<decltype(to_tag)>;
    visit(from, [&](auto* from_tag) {
      using From = std::remove_pointer_t<decltype(from_tag)>;
      convert_kernel<To, From><<<grid_for(n), block, 0, as_stream(stream)>>>(
        static_cast<To*>(dst), static_cast<const From*>(src), n);
    });
  });
}

void unary(opcode op, void* dst, const void* x, dtype type, std::int64_t n, stream_handle stream) {
  visit(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    unary_kernel<T><<<grid_for(n), block, 0, as_stream(stream)>>>(op, static_cast<T*>(dst),
                                                                 static_cast<const T*>(x), n);
  });
}

void binary(opcode op, void* dst, const void* x, const void* y, dtype type, std::int64_t n,
            stream_handle stream) {
  visit(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    binary_kernel<T><<<grid_for(n), block, 0, as_stream(stream)>>>(
      op, static_cast<T*>(dst), static_cast<const T*>(x), static_cast<const T*>(y), n);
  });
}

const char* last_launch_error() {
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? "" : cudaGetErrorString(err);
}

} // namespace am::detail::cuda
