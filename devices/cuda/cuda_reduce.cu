// reduce_sum / reduce_max / reduce_min over any set of axes. The operand is seen as kept x reduced
// index spaces (cuda_kernels.hpp's reduce_layout). Many outputs with short reductions: one thread
// per output. Otherwise one block per (output, chunk), a shared-memory tree in the block, and when
// there are few outputs a second pass over the chunks' partial results (a stream-ordered scratch).
#include "devices/cuda/cuda_kernels.hpp"
#include "devices/cuda/reduce_ops.cuh"

namespace am::detail::cuda {

namespace {

__device__ __forceinline__ amd::i64 kept_offset(const reduce_layout& l, amd::i64 o) {
  amd::i64 off = 0;
  for (int d = l.kept_rank - 1; d >= 0; --d) {
    off += (o % l.kept_shape[d]) * l.kept_strides[d];
    o /= l.kept_shape[d];
  }
  return off;
}

__device__ __forceinline__ amd::i64 reduced_offset(const reduce_layout& l, amd::i64 r) {
  if (l.reduced_rank == 1)
    return r * l.reduced_strides[0];
  amd::i64 off = 0;
  for (int d = l.reduced_rank - 1; d >= 0; --d) {
    off += (r % l.reduced_shape[d]) * l.reduced_strides[d];
    r /= l.reduced_shape[d];
  }
  return off;
}

template <int D, class R>
__global__ void reduce_per_thread(storage_t<D>* dst, const storage_t<D>* src, reduce_layout l) {
  for (amd::i64 o = first_index(); o < l.outputs; o += grid_step()) {
    const storage_t<D>* base = src + kept_offset(l, o);
    typename R::A acc = R::init();
    for (amd::i64 r = 0; r < l.reduced; ++r)
      acc = R::combine(acc, R::from(amd::dt<D>::load(base[reduced_offset(l, r)])));
    dst[o] = amd::dt<D>::store(R::finish(acc));
  }
}

/// Block (o, c) reduces chunk c of output o; writes the result (chunks == 1) or a partial.
template <int D, class R>
__global__ void reduce_per_block(storage_t<D>* dst, typename R::A* partial, const storage_t<D>* src,
                                 reduce_layout l, amd::i64 chunks) {
  __shared__ typename R::A tree[block_size];
  amd::i64 chunk_len = (l.reduced + chunks - 1) / chunks;
  for (amd::i64 job = blockIdx.x; job < l.outputs * chunks; job += gridDim.x) {
    amd::i64 o = job / chunks, c = job % chunks;
    const storage_t<D>* base = src + kept_offset(l, o);
    amd::i64 begin = c * chunk_len, end = begin + chunk_len < l.reduced ? begin + chunk_len : l.reduced;
    typename R::A acc = R::init();
    for (amd::i64 r = begin + threadIdx.x; r < end; r += blockDim.x)
      acc = R::combine(acc, R::from(amd::dt<D>::load(base[reduced_offset(l, r)])));
    tree[threadIdx.x] = acc;
    __syncthreads();
    for (int step = block_size / 2; step > 0; step /= 2) {
      if (threadIdx.x < step)
        tree[threadIdx.x] = R::combine(tree[threadIdx.x], tree[threadIdx.x + step]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (chunks == 1)
        dst[o] = amd::dt<D>::store(R::finish(tree[0]));
      else
        partial[job] = tree[0];
    }
    __syncthreads();
  }
}

template <int D, class R>
__global__ void combine_partials(storage_t<D>* dst, const typename R::A* partial, amd::i64 outputs,
                                 amd::i64 chunks) {
  for (amd::i64 o = first_index(); o < outputs; o += grid_step()) {
    typename R::A acc = R::init();
    for (amd::i64 c = 0; c < chunks; ++c)
      acc = R::combine(acc, partial[o * chunks + c]);
    dst[o] = amd::dt<D>::store(R::finish(acc));
  }
}

template <int D, class R>
void run(void* dst_v, const void* src_v, const reduce_layout& l, cudaStream_t stream) {
  auto* dst = static_cast<storage_t<D>*>(dst_v);
  auto* src = static_cast<const storage_t<D>*>(src_v);
  if (l.outputs == 0)
    return;
  if (l.reduced <= 32 || (l.outputs >= 65536 && l.reduced <= 1024)) {
    reduce_per_thread<D, R><<<grid_for(l.outputs), block_size, 0, stream>>>(dst, src, l);
    return;
  }
  amd::i64 chunks = 1;
  if (l.outputs < 1024) {
    chunks = (1024 + l.outputs - 1) / l.outputs;
    amd::i64 most = (l.reduced + 4095) / 4096;
    chunks = chunks < most ? chunks : most;
    chunks = chunks < 1 ? 1 : chunks;
  }
  amd::i64 jobs = l.outputs * chunks;
  int blocks = static_cast<int>(jobs < 65535 ? jobs : 65535);
  typename R::A* partial = nullptr;
  if (chunks > 1 && cudaMallocAsync(reinterpret_cast<void**>(&partial), sizeof(typename R::A) * jobs, stream) != cudaSuccess) {
    chunks = 1; // no scratch: one block per output still gives the right answer
    jobs = l.outputs;
    blocks = static_cast<int>(jobs < 65535 ? jobs : 65535);
    partial = nullptr;
  }
  reduce_per_block<D, R><<<blocks, block_size, 0, stream>>>(dst, partial, src, l, chunks);
  if (chunks > 1) {
    combine_partials<D, R><<<grid_for(l.outputs), block_size, 0, stream>>>(dst, partial, l.outputs, chunks);
    cudaFreeAsync(partial, stream);
  }
}

} // namespace

void reduce(opcode op, void* dst, const void* src, dtype type, const reduce_layout& layout,
            stream_handle stream) {
  with_dtype(type, [&](auto d) {
    constexpr int D = decltype(d)::value;
    if (op == opcode::reduce_sum)
      run<D, sum_op<D>>(dst, src, layout, as_stream(stream));
    else if (op == opcode::reduce_max)
      run<D, extreme_op<D, 1>>(dst, src, layout, as_stream(stream));
    else
      run<D, extreme_op<D, 0>>(dst, src, layout, as_stream(stream));
  });
}

} // namespace am::detail::cuda
