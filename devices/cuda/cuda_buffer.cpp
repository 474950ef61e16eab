#include "devices/cuda/cuda_buffer.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/cuda/cuda_blas.hpp"
#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/cuda_memory.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace am::detail::cuda {

device_stream::device_stream(const device& dev) : dev_(dev) {
  scoped_device on(dev.local_ordinal);
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", dev_);
  stream_ = s;
}

device_stream::~device_stream() {
  scoped_device on(dev_.local_ordinal);
  auto s = static_cast<cudaStream_t>(stream_);
  cudaStreamSynchronize(s);
  destroy_blas_handle(blas_);
  cudaStreamDestroy(s);
}

cuda_buffer::cuda_buffer(am::dtype type, shape_t shape, std::shared_ptr<device_stream> stream)
  : buffer(type, std::move(shape), stream->dev().id), stream_(std::move(stream)) {
  auto bytes = byte_size();
  if (bytes == 0)
    return;
  auto s = static_cast<cudaStream_t>(stream_->handle());
  scoped_device on(ordinal());
  auto err = cudaMallocAsync(&data_, bytes, s);
  if (err == cudaErrorMemoryAllocation) {
    // Frees enqueued before us become reusable once the stream reaches them: wait, then retry.
    cudaGetLastError();
    cudaStreamSynchronize(s);
    err = cudaMallocAsync(&data_, bytes, s);
  }
  if (err != cudaSuccess) {
    cudaGetLastError();
    data_ = nullptr;
    std::size_t free_bytes = 0, total_bytes = 0;
    bool too_big = cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess && bytes > free_bytes;
    cudaGetLastError();
    if (err == cudaErrorMemoryAllocation || too_big)
      throw_out_of_memory(bytes, stream_->dev(), std::to_string(free_bytes) + " bytes free");
    check(err, "cudaMallocAsync", stream_->dev());
  }
  count_cuda_allocation(ordinal());
}

cuda_buffer::~cuda_buffer() {
  if (!data_)
    return;
  scoped_device on(ordinal());
  cudaFreeAsync(data_, static_cast<cudaStream_t>(stream_->handle()));
}

cuda_view::cuda_view(buffer_ref base, shape_t shape)
  : buffer(base->dtype(), std::move(shape), base->device_id()), base_(std::move(base)) {
  if (element_count(this->shape()) != base_->size())
    throw value_error("cuda_view: a view must keep the number of elements");
}

int cuda_ordinal_of(const buffer& b) noexcept {
  if (auto* c = dynamic_cast<const cuda_buffer*>(&b))
    return c->ordinal();
  if (auto* v = dynamic_cast<const cuda_view*>(&b))
    return cuda_ordinal_of(*v->base());
  return -1;
}

} // namespace am::detail::cuda
