/// The operations of per-shard programs. Kept apart from program.hpp (C++20) because the CUDA
/// kernels, compiled as C++17, dispatch on it too.
#pragma once

#include <cstdint>
#include <string_view>

namespace am {

/// What one instruction computes.
enum class opcode : std::uint8_t {
  parameter, ///< input buffer number `index`
  constant,  ///< every element = `scalar`
  iota,      ///< element i (row-major) = i
  convert,   ///< operand 0 converted to the result dtype
  neg,       ///< -x
  abs,       ///< |x|
  add,       ///< x + y
  subtract,  ///< x - y
  multiply,  ///< x * y
  divide,    ///< x / y (integer division truncates; division by zero gives 0 for integers)
  maximum,   ///< max(x, y)
  minimum,   ///< min(x, y)
};

/// Lower-case name of an opcode, as printed in program listings.
std::string_view opcode_name(opcode op) noexcept;

/// Number of operands an opcode takes.
int operand_count(opcode op) noexcept;

} // namespace am
