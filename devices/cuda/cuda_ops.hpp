/// Running one program instruction on a CUDA device with the precompiled kernels (the single
/// stages of a plan, and every instruction when the program runs unfused). Plain C++.
#pragma once

#include "actormesh/actors/program.hpp"
#include "devices/cuda/cuda_buffer.hpp"
#include "devices/cuda/cuda_plan.hpp"

#include <memory>
#include <vector>

namespace am::detail::cuda {

/// Computes instruction `j` of `p` into `values[j]`: a new buffer on `stream`'s device (a view for
/// reshape; a fill for a value `plan.constant_root` marks as a repeated constant). Operands are read
/// from `values`; deferred constants among them are filled first. Enqueues work and returns at once;
/// throws am::runtime_error when a launch fails and am::value_error for shapes the kernels do not
/// handle (rank above 8).
void run_single(const program& p, const execution_plan& plan, std::int32_t j,
                std::vector<buffer_ref>& values, const std::shared_ptr<device_stream>& stream);

/// Makes sure `values[v]` holds a buffer, filling it when `v` is a deferred constant.
void materialize(const program& p, const execution_plan& plan, std::int32_t v,
                 std::vector<buffer_ref>& values, const std::shared_ptr<device_stream>& stream);

/// Throws am::runtime_error when the last kernel launch on this thread failed.
void check_launch(const device& dev);

} // namespace am::detail::cuda
