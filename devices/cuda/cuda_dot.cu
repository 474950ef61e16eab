// dot: [m,k] x [k,n] -> [m,n] with 16x16 shared-memory tiles, accumulating as reduce_ops.cuh says
// (16-bit floats in float, integers wrapping, bool as or-of-ands). Simple and exact in its order
// (k ascending, like the CPU loop); cuBLAS is not used, so nothing beyond cudart is linked.
#include "devices/cuda/cuda_kernels.hpp"
#include "devices/cuda/reduce_ops.cuh"

namespace am::detail::cuda {

namespace {

constexpr int tile = 16;

template <int D>
__global__ void dot_kernel(storage_t<D>* c, const storage_t<D>* a, const storage_t<D>* b, amd::i64 m,
                           amd::i64 k, amd::i64 n) {
  typedef sum_op<D> R;
  typedef typename R::A A;
  __shared__ A ta[tile][tile];
  __shared__ A tb[tile][tile];
  int tx = threadIdx.x, ty = threadIdx.y;
  amd::i64 row = static_cast<amd::i64>(blockIdx.y) * tile + ty;
  amd::i64 col = static_cast<amd::i64>(blockIdx.x) * tile + tx;
  A acc = R::init();
  for (amd::i64 t = 0; t < k; t += tile) {
    ta[ty][tx] = (row < m && t + tx < k) ? R::from(amd::dt<D>::load(a[row * k + t + tx])) : A(0);
    tb[ty][tx] = (t + ty < k && col < n) ? R::from(amd::dt<D>::load(b[(t + ty) * n + col])) : A(0);
    __syncthreads();
    for (int q = 0; q < tile; ++q)
      acc = acc + ta[ty][q] * tb[q][tx];
    __syncthreads();
  }
  if (row < m && col < n)
    c[row * n + col] = amd::dt<D>::store(R::finish(acc));
}

} // namespace

void dot(void* dst, const void* a, const void* b, dtype type, std::int64_t m, std::int64_t k,
         std::int64_t n, stream_handle stream) {
  if (m == 0 || n == 0)
    return;
  dim3 block(tile, tile);
  dim3 grid(static_cast<unsigned>((n + tile - 1) / tile), static_cast<unsigned>((m + tile - 1) / tile));
  with_dtype(type, [&](auto d) {
    constexpr int D = decltype(d)::value;
    dot_kernel<D><<<grid, block, 0, as_stream(stream)>>>(static_cast<storage_t<D>*>(dst),
                                                         static_cast<const storage_t<D>*>(a),
                                                         static_cast<const storage_t<D>*>(b), m, k, n);
  });
}

} // namespace am::detail::cuda
