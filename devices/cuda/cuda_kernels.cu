// Precompiled kernels for the sources (constant, iota, random), convert and select: one grid-stride
// kernel per instruction, templated on dtype codes. The arithmetic is device_math.cuh's.
#include "devices/cuda/cuda_kernels.hpp"
#include "devices/cuda/kernel_common.cuh"
#include "devices/cuda/random_bridge.cuh"

namespace am::detail::cuda {

namespace {

template <int D>
__global__ void fill_kernel(storage_t<D>* dst, amd::i64 n, double value) {
  const storage_t<D> v = amd::dt<D>::store(amd::cvt<D, 7>(value));
  for (amd::i64 i = first_index(); i < n; i += grid_step())
    dst[i] = v;
}

template <int D>
__global__ void iota_kernel(storage_t<D>* dst, amd::i64 n) {
  for (amd::i64 i = first_index(); i < n; i += grid_step())
    dst[i] = amd::dt<D>::store(amd::cvt<D, 3>(i));
}

template <int To, int From>
__global__ void convert_kernel(storage_t<To>* dst, const storage_t<From>* src, amd::i64 n) {
  for (amd::i64 i = first_index(); i < n; i += grid_step())
    dst[i] = amd::dt<To>::store(amd::cvt<To, From>(amd::dt<From>::load(src[i])));
}

template <int D>
__global__ void select_kernel(storage_t<D>* dst, const unsigned char* pred, const storage_t<D>* a,
                              const storage_t<D>* b, amd::i64 n) {
  for (amd::i64 i = first_index(); i < n; i += grid_step())
    dst[i] = pred[i] != 0 ? a[i] : b[i];
}

template <int D, int NORMAL>
__global__ void random_kernel(storage_t<D>* dst, amd::i64 n, random_layout layout) {
  for (amd::i64 i = first_index(); i < n; i += grid_step()) {
    amd::i64 global = layout.base, r = i;
    for (int d = layout.rank - 1; d >= 0; --d) {
      global += (r % layout.local[d]) * layout.global_strides[d];
      r /= layout.local[d];
    }
    auto v = amd::random_value<D, NORMAL>(layout.key, global);
    if constexpr (!NORMAL && amd::dt<D>::kind == amd::k_float)
      if (layout.ranged)
        v = amd::random_in_range<D>(v, layout.low, layout.span);
    dst[i] = amd::dt<D>::store(v);
  }
}

} // namespace

void fill(void* dst, dtype type, std::int64_t n, double value, stream_handle stream) {
  with_dtype(type, [&](auto d) {
    constexpr int D = decltype(d)::value;
    fill_kernel<D><<<grid_for(n), block_size, 0, as_stream(stream)>>>(static_cast<storage_t<D>*>(dst), n, value);
  });
}

void iota(void* dst, dtype type, std::int64_t n, stream_handle stream) {
  with_dtype(type, [&](auto d) {
    constexpr int D = decltype(d)::value;
    iota_kernel<D><<<grid_for(n), block_size, 0, as_stream(stream)>>>(static_cast<storage_t<D>*>(dst), n);
  });
}

void convert(void* dst, dtype to, const void* src, dtype from, std::int64_t n, stream_handle stream) {
  with_dtype(to, [&](auto t) {
    constexpr int To = decltype(t)::value;
    with_dtype(from, [&](auto f) {
      constexpr int From = decltype(f)::value;
      convert_kernel<To, From><<<grid_for(n), block_size, 0, as_stream(stream)>>>(
        static_cast<storage_t<To>*>(dst), static_cast<const storage_t<From>*>(src), n);
    });
  });
}

void select(void* dst, const void* pred, const void* on_true, const void* on_false, dtype type,
            std::int64_t n, stream_handle stream) {
  with_dtype(type, [&](auto d) {
    constexpr int D = decltype(d)::value;
    select_kernel<D><<<grid_for(n), block_size, 0, as_stream(stream)>>>(
      static_cast<storage_t<D>*>(dst), static_cast<const unsigned char*>(pred),
      static_cast<const storage_t<D>*>(on_true), static_cast<const storage_t<D>*>(on_false), n);
  });
}

void random(opcode op, void* dst, dtype type, std::int64_t n, const random_layout& layout,
            stream_handle stream) {
  auto launch = [&](auto d, auto normal) {
    constexpr int D = decltype(d)::value;
    constexpr int N = decltype(normal)::value;
    random_kernel<D, N><<<grid_for(n), block_size, 0, as_stream(stream)>>>(static_cast<storage_t<D>*>(dst), n, layout);
  };
  bool normal = op == opcode::random_normal;
  switch (type) {
    case dtype::float16: normal ? launch(std::integral_constant<int, 4>{}, std::integral_constant<int, 1>{})
                                : launch(std::integral_constant<int, 4>{}, std::integral_constant<int, 0>{}); break;
    case dtype::bfloat16: normal ? launch(std::integral_constant<int, 5>{}, std::integral_constant<int, 1>{})
                                 : launch(std::integral_constant<int, 5>{}, std::integral_constant<int, 0>{}); break;
    case dtype::float32: normal ? launch(std::integral_constant<int, 6>{}, std::integral_constant<int, 1>{})
                                : launch(std::integral_constant<int, 6>{}, std::integral_constant<int, 0>{}); break;
    case dtype::float64: normal ? launch(std::integral_constant<int, 7>{}, std::integral_constant<int, 1>{})
                                : launch(std::integral_constant<int, 7>{}, std::integral_constant<int, 0>{}); break;
    case dtype::uint8: if (!normal) launch(std::integral_constant<int, 1>{}, std::integral_constant<int, 0>{}); break;
    case dtype::int32: if (!normal) launch(std::integral_constant<int, 2>{}, std::integral_constant<int, 0>{}); break;
    case dtype::int64: if (!normal) launch(std::integral_constant<int, 3>{}, std::integral_constant<int, 0>{}); break;
    default: break; // programs allow only these dtypes here (random bits of the integer ones)
  }
}

const char* last_launch_error() {
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? "" : cudaGetErrorString(err);
}

} // namespace am::detail::cuda
