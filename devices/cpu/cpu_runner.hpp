/// Runs compiled programs (cpu_compiler.hpp) on host memory: stage by stage, buffers from the
/// device's pool, intermediates of fused regions in a scratch area the device reuses.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/program.hpp"
#include "devices/detail/buffer_pool.hpp"
#include "devices/cpu/cpu_compiler.hpp"

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <vector>

namespace am::detail {

/// Scratch memory of one device (64-byte aligned), grown on demand and reused by every run.
class cpu_scratch {
public:
  /// At least `bytes` bytes; valid until the next call.
  void* get(std::size_t bytes);

private:
  struct deleter {
    void operator()(void* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<void, deleter> data_;
  std::size_t size_ = 0;
};

/// `in` readable by the host: itself, or a copy in `pool` when it lives in GPU memory (throws
/// am::value_error when this build cannot read it).
buffer_ref host_readable(const buffer_ref& in, const std::shared_ptr<buffer_pool>& pool);

/// Runs `c` (compiled from `p`) on `inputs` (checked against the program's input types) and returns
/// its outputs as buffers of `pool`'s device. Inputs may live on other devices. Throws
/// am::value_error on mismatched inputs, am::out_of_memory_error when the device is out of memory.
std::vector<buffer_ref> run_compiled(const compiled_program& c, const program& p,
                                     const std::vector<buffer_ref>& inputs,
                                     const std::shared_ptr<buffer_pool>& pool, cpu_scratch& scratch);

/// Compiles and runs `p` once (tests, benchmarks).
std::vector<buffer_ref> run_on_cpu(const program& p, const std::vector<buffer_ref>& inputs,
                                   const std::shared_ptr<buffer_pool>& pool,
                                   const compile_options& options = {});

} // namespace am::detail
