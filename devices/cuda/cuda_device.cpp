// The CUDA executor: runs programs on one GPU's stream as the stages of a plan (cuda_plan.hpp):
// fused elementwise regions as kernels generated and compiled with NVRTC once per program object,
// everything else with precompiled kernels. Allocation and free are stream-ordered
// (cudaMallocAsync/cudaFreeAsync from the device's pool), so intermediates are released as soon as
// the last stage reading them is enqueued. Outputs resolve when the stream reaches a host function
// that messages the actor (it makes no CUDA call); the actor then resolves the promises.
//
// Inputs from other devices: a program input that lives elsewhere is first copied into this
// device's memory on this stream, and the source buffer is kept alive until the stream has passed
// the copy. From another CUDA device: cudaMemcpyPeerAsync (peer access is enabled on first use
// when the hardware allows it; otherwise CUDA stages through the host). From a CPU device (its
// buffer is host-accessible): cudaMemcpyAsync host to device. The producer of an input has always
// finished (its future resolved), so the copy reads complete data.
//
// AM_CUDA_FUSION=off (or 0/false) runs every instruction as its own kernel (the unfused path, also
// used when NVRTC cannot be loaded or a fused kernel fails to compile).
#include "devices/cuda/cuda_device.hpp"

#include "actors/detail/log.hpp"
#include "actormesh/actors/errors.hpp"
#include "devices/cuda/cuda_buffer.hpp"
#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/cuda_memory.hpp"
#include "devices/cuda/cuda_ops.hpp"
#include "devices/cuda/fused_codegen.hpp"
#include "devices/cuda/fused_kernels.hpp"
#include "devices/cuda/nvrtc_compiler.hpp"
#include "devices/detail/device_actor.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>

namespace am::detail {

namespace {

using namespace am::detail::cuda;

/// What must stay alive until the stream has finished a piece of work, and what to do then.
struct pending_work {
  std::vector<buffer_ref> keep_alive;
  std::shared_ptr<const std::vector<std::byte>> upload_bytes;
  std::function<void()> finish;
};

/// A program prepared for this device: its plan and, per stage, the fused kernel to launch (null
/// for single stages and for regions that run instruction by instruction).
struct compiled_program {
  std::shared_ptr<const program> code; ///< keeps the cache key's object alive
  execution_plan plan;
  std::vector<kernel_handle> kernels;
};

/// Fusion is on unless AM_CUDA_FUSION says off/0/false.
bool fusion_requested() {
  const char* v = std::getenv("AM_CUDA_FUSION");
  if (!v)
    return true;
  std::string_view s(v);
  return !(s == "0" || s == "off" || s == "OFF" || s == "false" || s == "no");
}

std::size_t at(std::int64_t i) {
  return static_cast<std::size_t>(i);
}

class cuda_executor final : public device_executor {
public:
  explicit cuda_executor(device dev) : dev_(dev) {
    select();
    configure_cuda_memory_pool(dev.local_ordinal);
    stream_ = std::make_shared<device_stream>(dev);
    arch_ = compute_capability(dev.local_ordinal);
    std::string why;
    fuse_ = fusion_requested() && nvrtc_available(&why);
    if (fusion_requested() && !fuse_)
      log(log_level::warning, "{}: fused kernels are off, running programs unfused: {}", to_string(dev_), why);
  }

  ~cuda_executor() override {
    scoped_device on(dev_.local_ordinal);
    cudaStreamSynchronize(static_cast<cudaStream_t>(stream_->handle()));
  }

  void set_completion_notifier(completion_notifier notify) override { notify_ = std::move(notify); }

  void run_program(program_call& call) override {
    select();
    auto& prepared = prepare(call.code);
    auto& p = *call.code;
    if (call.inputs.size() != static_cast<std::size_t>(p.parameter_count()))
      throw value_error("Program '" + p.name + "' takes " + std::to_string(p.parameter_count())
                        + " inputs, got " + std::to_string(call.inputs.size()));
    std::vector<buffer_ref> values(p.code.size());
    pending_work work;
    for (std::size_t j = 0; j < p.code.size(); ++j) {
      auto& ins = p.code[j];
      if (ins.op != opcode::parameter)
        continue;
      auto& in = call.inputs[at(ins.index)].get();
      if (in->dtype() != ins.type.dtype || in->shape() != ins.type.shape)
        throw value_error("Program '" + p.name + "': input " + std::to_string(ins.index) + " has the "
                          + "wrong type (expected " + std::string(name(ins.type.dtype)) + ")");
      values[j] = localize(in, work);
    }
    for (std::size_t k = 0; k < prepared.plan.stages.size(); ++k) {
      auto& s = prepared.plan.stages[k];
      run_stage(p, prepared.plan, s, prepared.kernels[k], values);
      for (auto v : s.release)
        values[at(v)].reset(); // freed in stream order, after the kernels enqueued so far
    }
    std::vector<buffer_ref> outputs;
    for (auto o : p.outputs) {
      materialize(p, prepared.plan, o, values, stream_);
      outputs.push_back(values[at(o)]);
    }
    work.finish = [outputs = std::move(outputs), promises = call.outputs]() {
      for (std::size_t k = 0; k < promises.size(); ++k)
        promises[k].set_value(outputs[k]);
    };
    enqueue_completion(std::move(work));
  }

  void upload(upload_call& call) override {
    select();
    auto out = std::make_shared<cuda_buffer>(call.type.dtype, call.type.shape, stream_);
    if (call.write) { // written into a host block first, then copied like any other upload
      auto staged = std::make_shared<std::vector<std::byte>>(out->byte_size());
      call.write(staged->data(), staged->size());
      call.bytes = std::move(staged);
    }
    if (call.bytes->size() != out->byte_size())
      throw value_error("device_put: got " + std::to_string(call.bytes->size())
                        + " bytes for a buffer of " + std::to_string(out->byte_size()));
    if (out->byte_size() > 0)
      check(cudaMemcpyAsync(out->data(), call.bytes->data(), out->byte_size(), cudaMemcpyHostToDevice,
                            stream()), "cudaMemcpyAsync (host to device)", dev_);
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
    else if (!host->empty()) // cudaMemcpyDefault: the memory may belong to another GPU (UVA)
      check(cudaMemcpyAsync(host->data(), in->data(), host->size(), cudaMemcpyDefault, stream()),
            "cudaMemcpyAsync (device to host)", dev_);
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

  cudaStream_t stream() const { return static_cast<cudaStream_t>(stream_->handle()); }

  /// The plan and kernels of `code`, made on first use (programs are immutable: the pointer is
  /// the key, and the entry holds the program so the pointer cannot be reused meanwhile).
  compiled_program& prepare(const std::shared_ptr<const program>& code) {
    if (auto it = programs_.find(code.get()); it != programs_.end())
      return it->second;
    if (programs_.size() >= 4096)
      programs_.clear(); // kernels stay cached process-wide by source; plans are cheap to redo
    compiled_program c;
    c.code = code;
    c.plan = plan_program(*code, fuse_);
    c.kernels.assign(c.plan.stages.size(), nullptr);
    for (std::size_t k = 0; k < c.plan.stages.size(); ++k) {
      auto& s = c.plan.stages[k];
      if (s.kind != stage::kind_t::fused || runs_as_single(s) || s.outputs.empty())
        continue;
      try {
        auto source = fused_kernel_source(fused_kernel_body(*code, c.plan, s));
        c.kernels[k] = load_kernel(source, fused_kernel_name, arch_);
      } catch (const error& e) {
        log(log_level::warning, "{}: program '{}' runs a region unfused: {}", to_string(dev_), code->name,
            e.what());
      }
    }
    return programs_.emplace(code.get(), std::move(c)).first->second;
  }

  void run_stage(const program& p, const execution_plan& plan, const stage& s, kernel_handle kernel,
                 std::vector<buffer_ref>& values) {
    if (s.kind == stage::kind_t::single) {
      run_single(p, plan, s.instruction, values, stream_);
      return;
    }
    if (s.outputs.empty()) // a region nothing reads
      return;
    if (!kernel) { // one member, or no fused kernel: the precompiled kernel of each member
      for (auto m : s.members)
        run_single(p, plan, m, values, stream_);
      return;
    }
    // Arguments in the generated kernel's order: inputs, outputs, scalars, (key, base) per random
    // member, element count. The vectors are sized first: `args` points into them.
    std::vector<void*> pointers;
    for (auto v : s.inputs)
      pointers.push_back(values[at(v)]->data());
    for (auto v : s.outputs) {
      auto& t = p.code[at(v)].type;
      values[at(v)] = std::make_shared<cuda_buffer>(t.dtype, t.shape, stream_);
      pointers.push_back(values[at(v)]->data());
    }
    std::vector<double> scalars;
    for (auto c : s.scalars)
      scalars.push_back(p.code[at(c)].scalar);
    std::vector<unsigned long long> keys;
    std::vector<long long> bases;
    for (auto m : s.members) {
      auto& ins = p.code[at(m)];
      if (ins.op == opcode::random_uniform || ins.op == opcode::random_normal) {
        keys.push_back(static_cast<unsigned long long>(ins.attrs[0]));
        bases.push_back(random_base(ins));
      }
    }
    long long n = s.elements;
    std::vector<void*> args;
    for (auto& ptr : pointers)
      args.push_back(&ptr);
    for (auto& x : scalars)
      args.push_back(&x);
    for (std::size_t k = 0; k < keys.size(); ++k) {
      args.push_back(&keys[k]);
      args.push_back(&bases[k]);
    }
    args.push_back(&n);
    launch_kernel(kernel, n, args.data(), stream_->handle());
  }

  /// `in` as a buffer of this device: itself, or a copy made on this stream (see the top).
  buffer_ref localize(const buffer_ref& in, pending_work& work) {
    if (in->device_id() == dev_.id) {
      // Its memory may be freed in the order of another stream of this device (an NCCL stage's
      // result, stage_nccl.hpp): kept until this stream has passed the program.
      work.keep_alive.push_back(in);
      return in;
    }
    auto local = std::make_shared<cuda_buffer>(in->dtype(), in->shape(), stream_);
    work.keep_alive.push_back(in);
    if (local->byte_size() == 0)
      return local;
    if (in->host_accessible()) {
      check(cudaMemcpyAsync(local->data(), in->data(), local->byte_size(), cudaMemcpyHostToDevice, stream()),
            "cudaMemcpyAsync (input from a CPU device)", dev_);
      return local;
    }
    int source = cuda_ordinal_of(*in);
    if (source < 0)
      throw value_error("an input on device id " + std::to_string(in->device_id())
                        + " is neither host memory nor CUDA memory");
    enable_peer(source);
    check(cudaMemcpyPeerAsync(local->data(), dev_.local_ordinal, in->data(), source, local->byte_size(),
                              stream()),
          "cudaMemcpyPeerAsync (input from another GPU)", dev_);
    return local;
  }

  void enable_peer(int source) {
    if (source == dev_.local_ordinal || !peers_.insert(source).second)
      return;
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, dev_.local_ordinal, source) == cudaSuccess && can) {
      auto err = cudaDeviceEnablePeerAccess(source, 0);
      if (err != cudaSuccess && err != cudaErrorPeerAccessAlreadyEnabled)
        log(log_level::info, "{}: no peer access to GPU {}: {}", to_string(dev_), source, cudaGetErrorString(err));
    }
    cudaGetLastError();
  }

  /// Registers `work` under a token and asks the stream to notify the actor when it gets there.
  /// The host function makes no CUDA calls: it only sends a message.
  void enqueue_completion(pending_work work) {
    auto token = next_token_++;
    pending_.emplace(token, std::move(work));
    auto* note = new std::function<void()>([notify = notify_, token] { notify(token); });
    auto err = cudaLaunchHostFunc(
      stream(),
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
  std::shared_ptr<device_stream> stream_;
  int arch_ = 0;
  bool fuse_ = true;
  completion_notifier notify_;
  std::unordered_map<std::uint64_t, pending_work> pending_;
  std::uint64_t next_token_ = 1;
  std::unordered_map<const program*, compiled_program> programs_;
  std::set<int> peers_;
};

} // namespace

caf::actor spawn_cuda_device(caf::actor_system& system, const device& dev, stop_signal_ptr stop) {
  return spawn_device_actor(system, dev, std::make_unique<cuda_executor>(dev), std::move(stop));
}

} // namespace am::detail
