#include "devices/cuda/cuda_ops.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/cuda/cuda_blas.hpp"
#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/cuda_kernels.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <bit>
#include <string>

namespace am::detail::cuda {

namespace {

using dims = std::vector<std::pair<std::int64_t, std::int64_t>>; // (extent, stride) per dim

shape_t strides_of(const shape_t& shape) {
  shape_t st(shape.size(), 1);
  for (auto d = static_cast<std::ptrdiff_t>(shape.size()) - 2; d >= 0; --d)
    st[static_cast<std::size_t>(d)] = st[static_cast<std::size_t>(d) + 1] * shape[static_cast<std::size_t>(d) + 1];
  return st;
}

std::size_t at(std::int64_t i) {
  return static_cast<std::size_t>(i);
}

void too_deep(const char* what, std::size_t rank) {
  throw value_error(std::string(what) + " on a CUDA device handles up to " + std::to_string(layout_rank)
                    + " dimensions, got " + std::to_string(rank));
}

/// Drops extent-1 dims and merges neighbours that form one run (outer stride = inner stride x
/// inner extent).
dims collapse(const dims& in) {
  dims out;
  for (auto [extent, stride] : in) {
    if (extent == 1)
      continue;
    if (!out.empty() && out.back().second == stride * extent) {
      out.back().first *= extent;
      out.back().second = stride;
      continue;
    }
    out.emplace_back(extent, stride);
  }
  return out;
}

/// Copies `shape` elements from `src` to `dst` with the given strides and offsets (in elements):
/// dims that form one run in both buffers are merged, and a copy that is one run is a memcpy.
void copy(buffer& dst, buffer& src, const shape_t& shape, const shape_t& src_strides,
          const shape_t& dst_strides, std::int64_t src_offset, std::int64_t dst_offset, void* stream) {
  if (element_count(shape) == 0)
    return;
  copy_layout l;
  l.src_offset = src_offset;
  l.dst_offset = dst_offset;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 1)
      continue;
    int r = l.rank;
    if (r > 0 && l.src_strides[r - 1] == src_strides[k] * shape[k]
        && l.dst_strides[r - 1] == dst_strides[k] * shape[k]) {
      l.shape[r - 1] *= shape[k];
      l.src_strides[r - 1] = src_strides[k];
      l.dst_strides[r - 1] = dst_strides[k];
      continue;
    }
    if (r == layout_rank)
      too_deep("a copy", shape.size());
    l.shape[r] = shape[k];
    l.src_strides[r] = src_strides[k];
    l.dst_strides[r] = dst_strides[k];
    l.rank = r + 1;
  }
  auto esize = static_cast<std::int64_t>(size_of(dst.dtype()));
  auto* d = static_cast<char*>(dst.data());
  auto* s = static_cast<const char*>(src.data());
  if (l.rank == 0 || (l.rank == 1 && l.src_strides[0] == 1 && l.dst_strides[0] == 1)) {
    auto n = l.rank == 0 ? 1 : l.shape[0];
    auto err = cudaMemcpyAsync(d + dst_offset * esize, s + src_offset * esize, at(n * esize),
                               cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream));
    check(err, "cudaMemcpyAsync (device to device)", device{dst.device_id(), 0, platform::cuda, 0});
    return;
  }
  strided_copy(d, s, at(esize), l, stream);
}

random_layout random_of(const instruction& ins) {
  random_layout l;
  auto rank = at(ins.attrs[1]);
  if (rank > layout_rank)
    too_deep("random values", rank);
  shape_t global(ins.attrs.begin() + 2, ins.attrs.begin() + 2 + static_cast<std::ptrdiff_t>(rank));
  auto gst = strides_of(global);
  l.key = static_cast<std::uint64_t>(ins.attrs[0]);
  l.rank = static_cast<int>(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    l.base += ins.attrs[2 + rank + d] * gst[d];
    l.local[d] = ins.type.shape[d];
    l.global_strides[d] = gst[d];
  }
  if (ins.attrs.size() == 4 + 2 * rank) {
    l.ranged = 1;
    l.low = std::bit_cast<double>(ins.attrs[2 + 2 * rank]);
    l.span = std::bit_cast<double>(ins.attrs[3 + 2 * rank]);
  }
  return l;
}

reduce_layout reduce_of(const instruction& ins, const shape_t& in) {
  auto st = strides_of(in);
  dims kept, reduced;
  for (std::size_t d = 0; d < in.size(); ++d) {
    bool r = std::binary_search(ins.attrs.begin(), ins.attrs.end(), static_cast<std::int64_t>(d));
    (r ? reduced : kept).emplace_back(in[d], st[d]);
  }
  reduce_layout l;
  for (auto& [e, s] : kept)
    l.outputs *= e;
  for (auto& [e, s] : reduced)
    l.reduced *= e;
  kept = collapse(kept);
  reduced = collapse(reduced);
  if (kept.size() > layout_rank || reduced.size() > layout_rank)
    too_deep("a reduction", in.size());
  l.kept_rank = static_cast<int>(kept.size());
  for (std::size_t k = 0; k < kept.size(); ++k) {
    l.kept_shape[k] = kept[k].first;
    l.kept_strides[k] = kept[k].second;
  }
  l.reduced_rank = static_cast<int>(reduced.size());
  for (std::size_t k = 0; k < reduced.size(); ++k) {
    l.reduced_shape[k] = reduced[k].first;
    l.reduced_strides[k] = reduced[k].second;
  }
  return l;
}

} // namespace

void check_launch(const device& dev) {
  if (const char* err = last_launch_error(); *err)
    throw runtime_error(std::string("kernel launch failed on ") + to_string(dev) + ": " + err);
}

void materialize(const program& p, const execution_plan& plan, std::int32_t v,
                 std::vector<buffer_ref>& values, const std::shared_ptr<device_stream>& stream) {
  if (!values[at(v)])
    run_single(p, plan, v, values, stream);
}

void run_single(const program& p, const execution_plan& plan, std::int32_t j,
                std::vector<buffer_ref>& values, const std::shared_ptr<device_stream>& stream) {
  auto& ins = p.code[at(j)];
  auto root = plan.constant_root.empty() ? -1 : plan.constant_root[at(j)];
  if (root < 0 && ins.op == opcode::constant)
    root = j;
  if (root < 0)
    for (auto o : ins.operands)
      materialize(p, plan, o, values, stream);
  auto operand = [&](std::size_t k) -> buffer& { return *values[at(ins.operands[k])]; };
  if (root < 0 && ins.op == opcode::reshape) {
    values[at(j)] = std::make_shared<cuda_view>(values[at(ins.operands[0])], ins.type.shape);
    return;
  }
  auto out = std::make_shared<cuda_buffer>(ins.type.dtype, ins.type.shape, stream);
  auto n = out->size();
  void* s = stream->handle();
  void* dst = out->data();
  auto t = ins.type.dtype;
  if (root >= 0) {
    fill(dst, t, n, p.code[at(root)].scalar, s);
  } else if (ins.op == opcode::iota) {
    iota(dst, t, n, s);
  } else if (ins.op == opcode::random_uniform || ins.op == opcode::random_normal) {
    random(ins.op, dst, t, n, random_of(ins), s);
  } else if (ins.op == opcode::convert) {
    convert(dst, t, operand(0).data(), operand(0).dtype(), n, s);
  } else if (ins.op >= opcode::neg && ins.op <= opcode::square) {
    unary(ins.op, dst, operand(0).data(), t, n, s);
  } else if (ins.op >= opcode::add && ins.op <= opcode::power) {
    binary(ins.op, dst, operand(0).data(), operand(1).data(), t, n, s);
  } else if (is_comparison(ins.op)) {
    compare(ins.op, dst, operand(0).data(), operand(1).data(), operand(0).dtype(), n, s);
  } else if (ins.op == opcode::select) {
    select(dst, operand(0).data(), operand(1).data(), operand(2).data(), t, n, s);
  } else if (ins.op == opcode::broadcast_in_dim) {
    auto& in = operand(0).shape();
    auto in_st = strides_of(in);
    shape_t src_st(ins.type.shape.size(), 0);
    for (std::size_t k = 0; k < ins.attrs.size(); ++k)
      if (in[k] != 1)
        src_st[at(ins.attrs[k])] = in_st[k];
    copy(*out, operand(0), ins.type.shape, src_st, strides_of(ins.type.shape), 0, 0, s);
  } else if (ins.op == opcode::transpose) {
    auto in_st = strides_of(operand(0).shape());
    shape_t src_st;
    for (auto d : ins.attrs)
      src_st.push_back(in_st[at(d)]);
    copy(*out, operand(0), ins.type.shape, src_st, strides_of(ins.type.shape), 0, 0, s);
  } else if (ins.op == opcode::slice) {
    auto in_st = strides_of(operand(0).shape());
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < in_st.size(); ++d)
      offset += ins.attrs[d] * in_st[d];
    copy(*out, operand(0), ins.type.shape, in_st, strides_of(ins.type.shape), offset, 0, s);
  } else if (ins.op == opcode::concatenate) {
    auto out_st = strides_of(ins.type.shape);
    std::int64_t along = 0;
    for (std::size_t k = 0; k < ins.operands.size(); ++k) {
      auto& part = operand(k);
      copy(*out, part, part.shape(), strides_of(part.shape()), out_st, 0, along * out_st[at(ins.index)], s);
      along += part.shape()[at(ins.index)];
    }
  } else if (ins.op == opcode::reduce_sum || ins.op == opcode::reduce_max || ins.op == opcode::reduce_min) {
    reduce(ins.op, dst, operand(0).data(), t, reduce_of(ins, operand(0).shape()), s);
  } else if (ins.op == opcode::dot) {
    run_dot(*stream, t, operand(0).data(), operand(1).data(), dst,
            dot_geometry_of(operand(0).shape(), operand(1).shape(), ins.attrs));
  } else {
    throw value_error("the CUDA executor cannot run " + std::string(opcode_name(ins.op)));
  }
  check_launch(stream->dev());
  values[at(j)] = std::move(out);
}

} // namespace am::detail::cuda
