/// The operations of per-shard programs. Kept apart from program.hpp (C++20) because the CUDA
/// kernels, compiled as C++17, dispatch on it too.
#ifndef ACTORMESH_ACTORS_OPCODE_HPP
#define ACTORMESH_ACTORS_OPCODE_HPP

#include <cstdint>
#include <string_view>

namespace am {

/// What one instruction computes. Operands are earlier instructions; `attrs` and `scalar`/`index`
/// of the instruction carry the parameters noted here. Elementwise operations take operands of the
/// result's shape (broadcasting is an explicit `broadcast_in_dim`), and of the result's dtype unless
/// noted.
enum class opcode : std::uint8_t {
  // -- sources --
  parameter, ///< input buffer number `index`
  constant,  ///< every element = `scalar`
  iota,      ///< element i (row-major) = i
  random_uniform, ///< uniform in [0, 1) of a float dtype, JAX's random bits of an integer dtype
                  ///< (jax.random.bits; int32/int64 hold uint32/uint64 bits), from JAX's
                  ///< threefry2x32 (devices/detail/random_counter.hpp); attrs: key, rank r,
                  ///< r global dims, r offsets of this shard; element value depends only on the key
                  ///< and its global index, so every sharding gives the same array
  random_normal,  ///< standard normal, same attrs and guarantee as random_uniform
  // -- elementwise, one operand --
  convert, ///< operand converted to the result dtype (any dtypes)
  neg,     ///< -x
  abs,     ///< |x|
  sin,     ///< sin x
  cos,     ///< cos x
  tanh,    ///< tanh x
  exp,     ///< e^x
  log,     ///< natural log
  sqrt,    ///< square root
  square,  ///< x * x
  // -- elementwise, two operands --
  add,      ///< x + y
  subtract, ///< x - y
  multiply, ///< x * y
  divide,   ///< x / y (integers: truncates; division by zero gives 0)
  floor_divide, ///< x // y as jnp.floor_divide: integers round toward -inf (x // 0 is -2, 0 // 0 is
                ///< -1, unsigned x // 0 all ones, as XLA's division gives them); floats round(
                ///< (x - fmod(x, y)) / y), one less where fmod's sign differs from y's
  maximum,  ///< max(x, y), NaN-propagating for floats
  minimum,  ///< min(x, y), NaN-propagating for floats
  power,    ///< x ** y
  equal,         ///< x == y, result bool
  not_equal,     ///< x != y, result bool
  less,          ///< x < y, result bool
  less_equal,    ///< x <= y, result bool
  greater,       ///< x > y, result bool
  greater_equal, ///< x >= y, result bool
  // -- elementwise, three operands --
  select, ///< operand 0 (bool) ? operand 1 : operand 2
  // -- structural --
  broadcast_in_dim, ///< attrs[i] = the result dim that operand dim i maps to (size 1 or equal)
  reshape,          ///< same elements, row-major, new shape
  transpose,        ///< attrs = permutation: result dim i is operand dim attrs[i]
  slice,            ///< attrs = starts (rank values) then limits (rank values), step 1
  concatenate,      ///< any number of operands joined along dim `index`
  // -- reductions and contractions --
  reduce_sum, ///< sum over the dims in attrs (sorted); result drops them
  reduce_max, ///< max over the dims in attrs
  reduce_min, ///< min over the dims in attrs
  dot,        ///< matrix product [m,k] x [k,n] -> [m,n], or batched [B,m,k] x [B,k,n] (or x a shared
              ///< [k,n]) -> [B,m,n]; attrs empty, or {tx, ty}: 1 where that operand is stored with
              ///< its last two dims swapped ([..,k,m] / [..,n,k])
};

/// Number of opcodes, for tables indexed by opcode.
inline constexpr int opcode_count = static_cast<int>(opcode::dot) + 1;

/// Lower-case name of an opcode, as printed in program listings.
std::string_view opcode_name(opcode op) noexcept;

/// Number of operands an opcode takes; -1 for any number (concatenate).
int operand_count(opcode op) noexcept;

/// True for opcodes that compute each output element from the same-index elements of their operands
/// (the ones a fused loop can chain without materializing intermediates).
constexpr bool is_elementwise(opcode op) noexcept {
  return op >= opcode::convert && op <= opcode::select;
}

/// True for the comparisons, whose result is bool.
constexpr bool is_comparison(opcode op) noexcept {
  return op >= opcode::equal && op <= opcode::greater_equal;
}

} // namespace am

#endif // ACTORMESH_ACTORS_OPCODE_HPP
