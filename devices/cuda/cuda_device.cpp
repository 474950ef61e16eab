#include "devices/cuda/cuda_device.hpp"

#include "actors/errors.hpp"
#include "devices/cuda/cuda_kernels.hpp"
#include "devices/detail/device_actor.hpp"

#include <cuda_runtime_api.h>

#include <cstring>
#include <functional>
#include <memory>
#include <unordered_map>

namespace am::detail {

namespace {

/// Throws am::runtime_error (or out_of_memory_error) for a failed CUDA call.
void check(cudaError_t err, const char* what, const device& dev) {
  if (err == cudaSuccess)
    return;
  std::string text = std::string(what) + " failed on " + to_string(dev) + ": " + cudaGetErrorName(err)
                     + " (" + cudaGetErrorString(err) + ")";
  if (err == cudaErrorMemoryAllocation)
    throw out_of_memory_error("RESOURCE_EXHAUSTED: " + text);
  throw runtime_error(text);
}

/// The device's stream, shared by the executor and every buffer so that frees stay ordered.
struct stream_owner {
  int ordinal = 0;
  cudaStream_t stream = nullptr;
  ~stream_owner() {
    if (stream) {
      cudaSetDevice(ordinal);
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
    }
  }
};

/// A shard in HBM, allocated and freed in stream order.
class cuda_buffer final : public buffer {
public:
  cuda_buffer(am::dtype type, shape_t shape, const device& dev, std::shared_ptr<stream_owner> s)
    : buffer(type, std::move(shape), dev.id), stream_(std::move(s)) {
    if (byte_size() > 0)
      check(cudaMallocAsync(&data_, byte_size(), stream_->stream), "cudaMallocAsync", dev);
  }

  ~cuda_buffer() override {
    if (!data_)
      return;
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(stream_->ordinal);
    cudaFreeAsync(data_, stream_->stream);
    cudaSetDevice(previous);
  }

  void* data() noexcept override { return data_; }
  bool host_accessible() const noexcept override { return false; }

private:
  void* data_ = nullptr;
  std::shared_ptr<stream_owner> stream_;
};

/// What must stay alive until the stream has finished a piece of work, and what to do then.
struct pending_work {
  std::vector<buffer_ref> keep_alive;
  std::shared_ptr<const std::vector<std::byte>> upload_bytes;
  std::function<void()> finish;
};

class cuda_executor final : public device_executor {
public:
  explicit cuda_executor(device dev) : dev_(dev), stream_(std::make_shared<stream_owner>()) {
    stream_->ordinal = dev.local_ordinal;
    select();
    check(cudaStreamCreateWithFlags(&stream_->stream, cudaStreamNonBlocking), "cudaStreamCreate", dev_);
  }

  void set_completion_notifier(completion_notifier notify) override { notify_ = std::move(notify); }

  void run_program(program_call& call) override {
    select();
    auto& p = *call.code;
    std::vector<buffer_ref> values(p.code.size());
    pending_work work;
    for (std::size_t i = 0; i < p.code.size(); ++i) {
      auto& ins = p.code[i];
      if (ins.op == opcode::parameter) {
        auto& in = call.inputs.at(static_cast<std::size_t>(ins.index)).get();
        if (in->dtype() != ins.type.dtype || in->shape() != ins.type.shape)
          throw value_error("Program '" + p.name + "': input " + std::to_string(ins.index)
                            + " has the wrong type");
        if (in->device_id() != dev_.id)
          throw value_error("Program '" + p.name + "': input " + std::to_string(ins.index)
                            + " lives on another device; move it first");
        values[i] = in;
      } else {
        values[i] = launch(ins, values);
      }
      work.keep_alive.push_back(values[i]);
    }
    std::vector<buffer_ref> outputs;
    for (auto o : p.outputs)
      outputs.push_back(values[static_cast<std::size_t>(o)]);
    work.finish = [outputs = std::move(outputs), promises = call.outputs]() {
      for (std::size_t k = 0; k < promises.size(); ++k)
        promises[k].set_value(outputs[k]);
    };
    enqueue_completion(std::move(work));
  }

  void upload(upload_call& call) override {
    select();
    auto out = std::make_shared<cuda_buffer>(call.type.dtype, call.type.shape, dev_, stream_);
    if (call.bytes->size() != out->byte_size())
      throw value_error("device_put: got " + std::to_string(call.bytes->size())
                        + " bytes for a buffer of " + std::to_string(out->byte_size()));
    check(cudaMemcpyAsync(out->data(), call.bytes->data(), out->byte_size(), cudaMemcpyHostToDevice,
                          stream_->stream), "cudaMemcpyAsync", dev_);
    pending_work work;
    work.upload_bytes = call.bytes;
    work.finish = [out, promise = call.output]() { promise.set_value(out); };
    enqueue_completion(std::move(work));
  }

  void fetch(fetch_call& call) override {
    select();
    auto in = call.input.get();
    auto host = std::make_shared<std::vector<std::byte>>(in->byte_size());
    if (in->host_accessible())
      std::memcpy(host->data(), in->data(), host->size());
    else
      check(cudaMemcpyAsync(host->data(), in->data(), host->size(), cudaMemcpyDeviceToHost,
                            stream_->stream), "cudaMemcpyAsync", dev_);
    pending_work work;
    work.keep_alive.push_back(in);
    work.finish = [host, promise = call.output]() { promise.set_value(std::move(*host)); };
    enqueue_completion(std::move(work));
  }

  void complete(std::uint64_t token) override {
    auto it = pending_.find(token);
    if (it == pending_.end())
      return;
    auto work = std::move(it->second);
    pending_.erase(it);
    work.finish();
  }

private:
  void select() { check(cudaSetDevice(dev_.local_ordinal), "cudaSetDevice", dev_); }

  buffer_ref launch(const instruction& ins, const std::vector<buffer_ref>& values) {
    auto out = std::make_shared<cuda_buffer>(ins.type.dtype, ins.type.shape, dev_, stream_);
    auto n = out->size();
    auto operand = [&](int k) { return values[static_cast<std::size_t>(ins.operands[static_cast<std::size_t>(k)])]; };
    switch (ins.op) {
      case opcode::constant: cuda::fill(out->data(), ins.type.dtype, n, ins.scalar, stream_->stream); break;
      case opcode::iota: cuda::iota(out->data(), ins.type.dtype, n, stream_->stream); break;
      case opcode::convert:
        cuda::convert(out->data(), ins.type.dtype, operand(0)->data(), operand(0)->dtype(), n, stream_->stream);
        break;
      case opcode::neg:
      case opcode::abs:
        cuda::unary(ins.op, out->data(), operand(0)->data(), ins.type.dtype, n, stream_->stream);
        break;
      default:
        cuda::binary(ins.op, out->data(), operand(0)->data(), operand(1)->data(), ins.type.dtype, n,
                     stream_->stream);
    }
    if (const char* err = cuda::last_launch_error(); *err)
      throw runtime_error(std::string("kernel launch failed on ") + to_string(dev_) + ": " + err);
    return out;
  }

  /// Registers `work` under a token and asks the stream to notify the actor when it gets there.
  /// The host function makes no CUDA calls: it only sends a message.
  void enqueue_completion(pending_work work) {
    auto token = next_token_++;
    pending_.emplace(token, std::move(work));
    auto* note = new std::function<void()>([notify = notify_, token] { notify(token); });
    auto err = cudaLaunchHostFunc(
      stream_->stream,
      [](void* p) {
        std::unique_ptr<std::function<void()>> f(static_cast<std::function<void()>*>(p));
        (*f)();
      },
      note);
    if (err != cudaSuccess) {
      delete note;
      pending_.erase(token);
      check(err, "cudaLaunchHostFunc", dev_);
    }
  }

  device dev_;
  std::shared_ptr<stream_owner> stream_;
  completion_notifier notify_;
  std::unordered_map<std::uint64_t, pending_work> pending_;
  std::uint64_t next_token_ = 1;
};

} // namespace

caf::actor spawn_cuda_device(caf::actor_system& system, const device& dev) {
  return spawn_device_actor(system, dev, std::make_unique<cuda_executor>(dev));
}

} // namespace am::detail
