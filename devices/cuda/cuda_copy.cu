// The strided copy behind broadcast_in_dim, transpose, slice and concatenate: element-size
// templated (the dtype does not matter for a copy), index maths per element over up to 8 dims.
#include "devices/cuda/cuda_kernels.hpp"
#include "devices/cuda/kernel_common.cuh"

namespace am::detail::cuda {

namespace {

template <class E>
__global__ void strided_copy_kernel(E* dst, const E* src, copy_layout l, amd::i64 n) {
  for (amd::i64 i = first_index(); i < n; i += grid_step()) {
    amd::i64 r = i, s = l.src_offset, d = l.dst_offset;
    for (int k = l.rank - 1; k >= 0; --k) {
      amd::i64 c = r % l.shape[k];
      r /= l.shape[k];
      s += c * l.src_strides[k];
      d += c * l.dst_strides[k];
    }
    dst[d] = src[s];
  }
}

template <class E>
void launch(void* dst, const void* src, const copy_layout& l, amd::i64 n, cudaStream_t stream) {
  strided_copy_kernel<E><<<grid_for(n), block_size, 0, stream>>>(static_cast<E*>(dst), static_cast<const E*>(src), l, n);
}

} // namespace

void strided_copy(void* dst, const void* src, std::size_t element_size, const copy_layout& layout,
                  stream_handle stream) {
  amd::i64 n = 1;
  for (int k = 0; k < layout.rank; ++k)
    n *= layout.shape[k];
  if (n == 0)
    return;
  switch (element_size) {
    case 1: launch<unsigned char>(dst, src, layout, n, as_stream(stream)); break;
    case 2: launch<unsigned short>(dst, src, layout, n, as_stream(stream)); break;
    case 4: launch<unsigned int>(dst, src, layout, n, as_stream(stream)); break;
    default: launch<unsigned long long>(dst, src, layout, n, as_stream(stream)); break;
  }
}

} // namespace am::detail::cuda
