/// Runs a per-shard program on host memory, one instruction at a time over whole buffers.
#pragma once

#include "actors/buffer.hpp"
#include "actors/program.hpp"

#include <vector>

namespace am::detail {

/// Runs `p` on `inputs` (checked against the program's input types) and returns its outputs as new
/// CPU buffers owned by device `device_id`. Throws am::value_error on mismatched inputs.
std::vector<buffer_ref> run_on_cpu(const program& p, const std::vector<buffer_ref>& inputs,
                                   int device_id);

} // namespace am::detail
