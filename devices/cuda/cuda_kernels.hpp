/// The CUDA kernels of the device path behind a plain C++ interface (no CUDA headers), so the rest
/// of the runtime compiles as C++20 while the kernels compile as CUDA C++17.
#pragma once

#include "actors/dtype.hpp"
#include "actors/opcode.hpp"

#include <cstdint>

namespace am::detail::cuda {

/// Opaque CUDA stream (a cudaStream_t).
using stream_handle = void*;

/// Fills `n` elements of `dst` with `value` converted to `type`.
void fill(void* dst, dtype type, std::int64_t n, double value, stream_handle stream);

/// Writes the row-major element index, converted to `type`.
void iota(void* dst, dtype type, std::int64_t n, stream_handle stream);

/// Converts `n` elements from `from` to `to`, with the CPU path's rules.
void convert(void* dst, dtype to, const void* src, dtype from, std::int64_t n, stream_handle stream);

/// Runs a one-operand elementwise opcode.
void unary(opcode op, void* dst, const void* x, dtype type, std::int64_t n, stream_handle stream);

/// Runs a two-operand elementwise opcode.
void binary(opcode op, void* dst, const void* x, const void* y, dtype type, std::int64_t n,
            stream_handle stream);

/// The last launch error as text, or empty when there was none (clears it).
const char* last_launch_error();

} // namespace am::detail::cuda
