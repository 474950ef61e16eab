/// Device memory of CUDA shards, in plain C++ (no CUDA headers): the device's stream, buffers
/// allocated and freed in that stream's order (cudaMallocAsync from the device's memory pool), and
/// views that give a buffer another shape without copying (reshape).
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"

#include <memory>

namespace am::detail::cuda {

/// The stream of one CUDA device. Shared by the executor and every buffer, so a buffer freed after
/// the executor is gone is still freed in stream order; the last owner synchronizes and destroys it.
class device_stream {
public:
  /// Creates a non-blocking stream on CUDA device `dev.local_ordinal`; throws am::runtime_error.
  explicit device_stream(const device& dev);
  ~device_stream();

  device_stream(const device_stream&) = delete;
  device_stream& operator=(const device_stream&) = delete;

  /// The device this stream belongs to.
  const device& dev() const noexcept { return dev_; }

  /// The cudaStream_t.
  void* handle() const noexcept { return stream_; }

  /// This device's cuBLAS handle (a cublasHandle_t) bound to this stream: created on first use, from
  /// the executor's thread, and destroyed with the stream (devices/cuda/cuda_blas.cpp).
  void* blas_handle();

private:
  device dev_;
  void* stream_ = nullptr;
  void* blas_ = nullptr;
};

/// A shard in device memory (HBM).
class cuda_buffer final : public buffer {
public:
  /// Allocates in stream order; throws am::out_of_memory_error
  /// ("RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes on CudaDevice(id=K)").
  cuda_buffer(am::dtype type, shape_t shape, std::shared_ptr<device_stream> stream);
  /// Frees in stream order (after every kernel already enqueued that may read it).
  ~cuda_buffer() override;

  void* data() noexcept override { return data_; }
  bool host_accessible() const noexcept override { return false; }

  /// The CUDA ordinal of the device holding the memory.
  int ordinal() const noexcept { return stream_->dev().local_ordinal; }

private:
  void* data_ = nullptr;
  std::shared_ptr<device_stream> stream_;
};

/// Another buffer's memory under a new shape with the same number of elements (reshape as alias).
class cuda_view final : public buffer {
public:
  /// A view of `base` (which stays alive as long as the view) with `shape`.
  cuda_view(buffer_ref base, shape_t shape);

  void* data() noexcept override { return base_->data(); }
  bool host_accessible() const noexcept override { return base_->host_accessible(); }

  /// The buffer whose memory this is.
  const buffer_ref& base() const noexcept { return base_; }

private:
  buffer_ref base_;
};

/// The CUDA ordinal of the memory behind `b`, or -1 when it is not CUDA device memory.
int cuda_ordinal_of(const buffer& b) noexcept;

} // namespace am::detail::cuda
