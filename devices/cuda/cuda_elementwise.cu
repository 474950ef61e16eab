// Precompiled one- and two-operand elementwise kernels and comparisons: one kernel per (opcode,
// dtype), each a grid-stride loop over device_math.cuh's operation (the unfused path: one kernel
// per instruction).
#include "devices/cuda/cuda_kernels.hpp"
#include "devices/cuda/kernel_common.cuh"

#include <utility>

namespace am::detail::cuda {

namespace {

constexpr int op_code(opcode op) {
  return static_cast<int>(op);
}

template <int D, int OP>
__device__ __forceinline__ compute_t<D> apply1(compute_t<D> a) {
  if constexpr (OP == op_code(opcode::neg)) return amd::op_neg<D>(a);
  else if constexpr (OP == op_code(opcode::abs)) return amd::op_abs<D>(a);
  else if constexpr (OP == op_code(opcode::sin)) return amd::op_sin<D>(a);
  else if constexpr (OP == op_code(opcode::cos)) return amd::op_cos<D>(a);
  else if constexpr (OP == op_code(opcode::tanh)) return amd::op_tanh<D>(a);
  else if constexpr (OP == op_code(opcode::exp)) return amd::op_exp<D>(a);
  else if constexpr (OP == op_code(opcode::log)) return amd::op_log<D>(a);
  else if constexpr (OP == op_code(opcode::sqrt)) return amd::op_sqrt<D>(a);
  else return amd::op_square<D>(a);
}

template <int D, int OP>
__device__ __forceinline__ compute_t<D> apply2(compute_t<D> a, compute_t<D> b) {
  if constexpr (OP == op_code(opcode::add)) return amd::op_add<D>(a, b);
  else if constexpr (OP == op_code(opcode::subtract)) return amd::op_subtract<D>(a, b);
  else if constexpr (OP == op_code(opcode::multiply)) return amd::op_multiply<D>(a, b);
  else if constexpr (OP == op_code(opcode::divide)) return amd::op_divide<D>(a, b);
  else if constexpr (OP == op_code(opcode::floor_divide)) return amd::op_floor_divide<D>(a, b);
  else if constexpr (OP == op_code(opcode::maximum)) return amd::op_maximum<D>(a, b);
  else if constexpr (OP == op_code(opcode::minimum)) return amd::op_minimum<D>(a, b);
  else return amd::op_power<D>(a, b);
}

template <int D, int OP>
__device__ __forceinline__ bool apply_compare(compute_t<D> a, compute_t<D> b) {
  if constexpr (OP == op_code(opcode::equal)) return amd::op_equal<D>(a, b);
  else if constexpr (OP == op_code(opcode::not_equal)) return amd::op_not_equal<D>(a, b);
  else if constexpr (OP == op_code(opcode::less)) return amd::op_less<D>(a, b);
  else if constexpr (OP == op_code(opcode::less_equal)) return amd::op_less_equal<D>(a, b);
  else if constexpr (OP == op_code(opcode::greater)) return amd::op_greater<D>(a, b);
  else return amd::op_greater_equal<D>(a, b);
}

template <int D, int OP>
__global__ void unary_kernel(storage_t<D>* dst, const storage_t<D>* x, amd::i64 n) {
  for (amd::i64 i = first_index(); i < n; i += grid_step())
    dst[i] = amd::dt<D>::store(apply1<D, OP>(amd::dt<D>::load(x[i])));
}

template <int D, int OP>
__global__ void binary_kernel(storage_t<D>* dst, const storage_t<D>* x, const storage_t<D>* y, amd::i64 n) {
  for (amd::i64 i = first_index(); i < n; i += grid_step())
    dst[i] = amd::dt<D>::store(apply2<D, OP>(amd::dt<D>::load(x[i]), amd::dt<D>::load(y[i])));
}

template <int D, int OP>
__global__ void compare_kernel(unsigned char* dst, const storage_t<D>* x, const storage_t<D>* y, amd::i64 n) {
  for (amd::i64 i = first_index(); i < n; i += grid_step())
    dst[i] = apply_compare<D, OP>(amd::dt<D>::load(x[i]), amd::dt<D>::load(y[i])) ? 1 : 0;
}

/// Calls `f(std::integral_constant<int, OP>{})` for the one OP in `ops` equal to `op`.
template <class F, int... OPS>
bool with_op(opcode op, std::integer_sequence<int, OPS...>, F&& f) {
  return ((op_code(op) == OPS ? (f(std::integral_constant<int, OPS>{}), true) : false) || ...);
}

template <int First, int Last, int... I>
constexpr auto op_range(std::integer_sequence<int, I...>) {
  return std::integer_sequence<int, (First + I)...>{};
}

/// The opcodes First..Last as a sequence.
template <opcode First, opcode Last>
constexpr auto ops_between() {
  return op_range<op_code(First), op_code(Last)>(
    std::make_integer_sequence<int, op_code(Last) - op_code(First) + 1>{});
}

} // namespace

void unary(opcode op, void* dst, const void* x, dtype type, std::int64_t n, stream_handle stream) {
  with_dtype(type, [&](auto d) {
    constexpr int D = decltype(d)::value;
    with_op(op, ops_between<opcode::neg, opcode::square>(), [&](auto o) {
      unary_kernel<D, decltype(o)::value><<<grid_for(n), block_size, 0, as_stream(stream)>>>(
        static_cast<storage_t<D>*>(dst), static_cast<const storage_t<D>*>(x), n);
    });
  });
}

void binary(opcode op, void* dst, const void* x, const void* y, dtype type, std::int64_t n,
            stream_handle stream) {
  with_dtype(type, [&](auto d) {
    constexpr int D = decltype(d)::value;
    with_op(op, ops_between<opcode::add, opcode::power>(), [&](auto o) {
      binary_kernel<D, decltype(o)::value><<<grid_for(n), block_size, 0, as_stream(stream)>>>(
        static_cast<storage_t<D>*>(dst), static_cast<const storage_t<D>*>(x),
        static_cast<const storage_t<D>*>(y), n);
    });
  });
}

void compare(opcode op, void* dst, const void* x, const void* y, dtype type, std::int64_t n,
             stream_handle stream) {
  with_dtype(type, [&](auto d) {
    constexpr int D = decltype(d)::value;
    with_op(op, ops_between<opcode::equal, opcode::greater_equal>(), [&](auto o) {
      compare_kernel<D, decltype(o)::value><<<grid_for(n), block_size, 0, as_stream(stream)>>>(
        static_cast<unsigned char*>(dst), static_cast<const storage_t<D>*>(x),
        static_cast<const storage_t<D>*>(y), n);
    });
  });
}

} // namespace am::detail::cuda
