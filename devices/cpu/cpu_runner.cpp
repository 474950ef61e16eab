#include "devices/cpu/cpu_runner.hpp"

#include "actormesh/build_config.hpp"
#include "actormesh/actors/errors.hpp"
#include "devices/cpu/cpu_blas.hpp"
#include "devices/cpu/cpu_buffer.hpp"
#include "devices/cpu/cpu_compute_gate.hpp"
#include "devices/cpu/cpu_region_runner.hpp"
#include "devices/cpu/cpu_stages.hpp"

#if AM_HAVE_CUDA
#include "devices/cuda/cuda_memory.hpp"
#endif

#include <cstring>
#include <string>

namespace am::detail {

namespace {

constexpr std::size_t scratch_alignment = 64;

} // namespace

buffer_ref host_readable(const buffer_ref& in, const std::shared_ptr<buffer_pool>& pool) {
  if (in->host_accessible())
    return in;
#if AM_HAVE_CUDA
  auto copy = make_cpu_buffer(in->dtype(), in->shape(), pool);
  cuda_copy_to_host(copy->data(), in->data(), in->byte_size());
  return copy;
#else
  (void)pool;
  throw value_error("a CPU device cannot read a shard of device " + std::to_string(in->device_id()));
#endif
}

namespace {

std::vector<buffer_ref> checked_inputs(const program& p, const std::vector<buffer_ref>& inputs,
                                       const std::shared_ptr<buffer_pool>& pool) {
  auto parameters = static_cast<std::size_t>(p.parameter_count());
  if (parameters != inputs.size())
    throw value_error("Program '" + p.name + "' takes " + std::to_string(parameters) + " inputs, got "
                      + std::to_string(inputs.size()));
  std::vector<buffer_ref> out(inputs.size());
  for (auto& ins : p.code) {
    if (ins.op != opcode::parameter)
      continue;
    auto k = static_cast<std::size_t>(ins.index);
    auto& in = inputs[k];
    if (!in)
      throw value_error("Program '" + p.name + "': input " + std::to_string(k) + " is missing");
    if (in->dtype() != ins.type.dtype || in->shape() != ins.type.shape)
      throw value_error("Program '" + p.name + "': input " + std::to_string(k) + " has the wrong type "
                        + "(expected " + std::string(name(ins.type.dtype)) + ", got "
                        + std::string(name(in->dtype())) + ")");
    out[k] = host_readable(in, pool);
  }
  return out;
}

/// The buffer of value `v` with instruction `v`'s own shape.
buffer_ref value_of(const compiled_program& c, const program& p, const std::vector<buffer_ref>& values,
                    std::int32_t v) {
  auto& buf = values[static_cast<std::size_t>(c.root[static_cast<std::size_t>(v)])];
  return reshape_view(buf, p.code[static_cast<std::size_t>(v)].type.shape);
}

void run_stage(const cpu_stage& st, const compiled_program& c, const program& p,
               std::vector<buffer_ref>& values, const std::shared_ptr<buffer_pool>& pool) {
  auto& ins = p.code[static_cast<std::size_t>(st.instruction)];
  auto out = make_cpu_buffer(ins.type.dtype, ins.type.shape, pool);
  switch (st.what) {
    case cpu_stage::kind::concatenate: {
      std::vector<buffer_ref> keep;
      std::vector<const buffer*> ins_buffers;
      for (auto o : ins.operands) {
        keep.push_back(value_of(c, p, values, o));
        ins_buffers.push_back(keep.back().get());
      }
      concatenate(ins_buffers, *out, ins.index);
      break;
    }
    case cpu_stage::kind::reduce:
      reduce(ins.op, *value_of(c, p, values, ins.operands[0]), *out, ins.attrs);
      break;
    case cpu_stage::kind::dot: {
      auto a = value_of(c, p, values, ins.operands[0]);
      auto b = value_of(c, p, values, ins.operands[1]);
      run_dot(ins.type.dtype, a->data(), a->shape(), b->data(), b->shape(), out->data(), ins.attrs,
              kernels(c.isa).dot[static_cast<int>(ins.type.dtype)]);
      break;
    }
    default: break;
  }
  values[static_cast<std::size_t>(st.instruction)] = std::move(out);
}

/// A copy of `in` in `pool` (for an output that would otherwise live on another device).
buffer_ref copy_to(const buffer_ref& in, const std::shared_ptr<buffer_pool>& pool) {
  auto out = make_cpu_buffer(in->dtype(), in->shape(), pool);
  if (in->byte_size() > 0)
    std::memcpy(out->data(), in->data(), in->byte_size());
  return out;
}

} // namespace

void* cpu_scratch::get(std::size_t bytes) {
  if (bytes > size_ || !data_) {
    auto rounded = (std::max<std::size_t>(bytes, scratch_alignment) + scratch_alignment - 1)
                   / scratch_alignment * scratch_alignment;
    data_.reset(std::aligned_alloc(scratch_alignment, rounded));
    if (!data_)
      throw resource_exhausted(rounded, "the host (scratch memory)");
    size_ = rounded;
  }
  return data_.get();
}

std::vector<buffer_ref> run_compiled(const compiled_program& c, const program& p,
                                     const std::vector<buffer_ref>& inputs,
                                     const std::shared_ptr<buffer_pool>& pool, cpu_scratch& scratch) {
  auto checked = checked_inputs(p, inputs, pool);
  std::vector<buffer_ref> values(p.code.size());
  for (std::size_t i = 0; i < p.code.size(); ++i)
    if (p.code[i].op == opcode::parameter)
      values[i] = checked[static_cast<std::size_t>(p.code[i].index)];
  checked.clear();
  for (auto v : c.inputs_released)
    values[static_cast<std::size_t>(v)].reset();
  for (auto& st : c.stages) {
    compute_slot turn(st, c, p); // one core per computing device at a time (cpu_compute_gate.hpp)
    if (st.what == cpu_stage::kind::fused)
      run_fused_region(c.regions[static_cast<std::size_t>(st.region)], c, p, values, pool, scratch);
    else
      run_stage(st, c, p, values, pool);
    for (auto v : st.release)
      values[static_cast<std::size_t>(v)].reset();
  }
  help_fused_regions(scratch); // this thread is done: take tiles of regions others still run
  std::vector<buffer_ref> outputs;
  outputs.reserve(p.outputs.size());
  for (auto o : p.outputs) {
    auto& root = values[static_cast<std::size_t>(c.root[static_cast<std::size_t>(o)])];
    if (root->device_id() != pool->device_id())
      root = copy_to(root, pool);
    outputs.push_back(reshape_view(root, p.code[static_cast<std::size_t>(o)].type.shape));
  }
  return outputs;
}

std::vector<buffer_ref> run_on_cpu(const program& p, const std::vector<buffer_ref>& inputs,
                                   const std::shared_ptr<buffer_pool>& pool, const compile_options& options) {
  auto c = compile_for_cpu(p, options);
  cpu_scratch scratch;
  return run_compiled(*c, p, inputs, pool, scratch);
}

} // namespace am::detail
