/// The per-shard program (doc/architecture.md, "Per-shard programs"): a small typed dataflow graph
/// over one shard's buffers. Every operation on arrays becomes one; eager use sends one-operation
/// programs, jit sends traced ones. Programs are immutable once built and travel in lane messages
/// by shared pointer.
#ifndef ACTORMESH_ACTORS_PROGRAM_HPP
#define ACTORMESH_ACTORS_PROGRAM_HPP

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/dtype.hpp"
#include "actormesh/actors/opcode.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace am {

/// The type of a value in a program.
struct value_type {
  am::dtype dtype = am::dtype::float32;
  shape_t shape;

  friend bool operator==(const value_type&, const value_type&) = default;
};

/// One instruction: result type, operands (indices of earlier instructions) and attributes, whose
/// meaning per opcode is given in actors/opcode.hpp.
struct instruction {
  opcode op = opcode::constant;
  value_type type;
  std::vector<std::int32_t> operands;
  double scalar = 0;              ///< the value of a constant
  std::int64_t index = 0;         ///< the input number of a parameter; the axis of a concatenate
  std::vector<std::int64_t> attrs; ///< dims, permutations, slice bounds, random-generator settings
};

/// A program: instructions in dependency order (SSA) and the instructions whose values it returns.
struct program {
  std::string name;
  std::vector<instruction> code;
  std::vector<std::int32_t> outputs;

  /// Number of parameters (inputs) the program reads.
  int parameter_count() const noexcept;

  /// Types of the inputs, by input number.
  std::vector<value_type> input_types() const;

  /// Types of the outputs, in order.
  std::vector<value_type> output_types() const;
};

/// Checks a program's structure (operand order and count, parameter numbering, matching shapes and
/// dtypes of elementwise operands); throws am::value_error naming the first bad instruction.
void validate(const program& p);

/// A readable listing, one instruction a line (`%2 = add f32[4,4] %0, %1`).
std::string to_string(const program& p);

/// Builds programs one instruction at a time; every method returns the new value's index.
class program_builder {
public:
  /// Starts a program with a name used in listings and errors.
  explicit program_builder(std::string name);

  /// The next input, of the given type.
  std::int32_t parameter(value_type type);

  /// A value whose every element is `value`.
  std::int32_t constant(double value, value_type type);

  /// The row-major element index, as `type`.
  std::int32_t iota(value_type type);

  /// `x` converted to `to`.
  std::int32_t convert(std::int32_t x, am::dtype to);

  /// A one-operand elementwise operation (not convert: see `convert`).
  std::int32_t unary(opcode op, std::int32_t x);

  /// A two-operand elementwise operation on operands of one type; comparisons give bool.
  std::int32_t binary(opcode op, std::int32_t x, std::int32_t y);

  /// `pred ? on_true : on_false`, elementwise; `pred` is bool.
  std::int32_t select(std::int32_t pred, std::int32_t on_true, std::int32_t on_false);

  /// `x` broadcast to `shape`; operand dim i becomes result dim `dims[i]`.
  std::int32_t broadcast_in_dim(std::int32_t x, shape_t shape, std::vector<std::int64_t> dims);

  /// `x` with the same elements in a new shape.
  std::int32_t reshape(std::int32_t x, shape_t shape);

  /// `x` with its dims permuted: result dim i is operand dim `permutation[i]`.
  std::int32_t transpose(std::int32_t x, std::vector<std::int64_t> permutation);

  /// The block [starts, limits) of `x`.
  std::int32_t slice(std::int32_t x, const std::vector<std::int64_t>& starts,
                     const std::vector<std::int64_t>& limits);

  /// The operands joined along `axis`.
  std::int32_t concatenate(const std::vector<std::int32_t>& xs, std::int64_t axis);

  /// reduce_sum / reduce_max / reduce_min of `x` over `axes`.
  std::int32_t reduce(opcode op, std::int32_t x, std::vector<std::int64_t> axes);

  /// The matrix product of `x` and `y`: 2-D [m,k] x [k,n] -> [m,n], or batched: x [B,m,k] with y
  /// [B,k,n] (one product per batch row) or y [k,n] (shared by every row) -> [B,m,n].
  /// `transpose_x` / `transpose_y`: that operand is stored with its last two dims swapped
  /// (x [..,k,m], y [..,n,k]), which the BLAS calls take as a flag instead of a copy.
  std::int32_t dot(std::int32_t x, std::int32_t y, bool transpose_x = false, bool transpose_y = false);

  /// random_uniform / random_normal values for the block of a global array of `global_shape` that
  /// starts at `offsets` and has the shape of `type`. `range`, for float random_uniform only, is
  /// {low, span}: the values become max(low, u * span + low) as jax.random.uniform computes them
  /// (both already rounded to the dtype; see devices/detail/random_counter.hpp).
  std::int32_t random(opcode op, value_type type, std::uint64_t key, const shape_t& global_shape,
                      const std::vector<std::int64_t>& offsets, const std::vector<double>& range = {});

  /// Marks a value as an output of the program.
  void output(std::int32_t value);

  /// The type of a value built so far.
  const value_type& type_of(std::int32_t value) const;

  /// Validates and returns the finished program.
  std::shared_ptr<const program> build();

private:
  std::int32_t push(instruction ins);

  program program_;
  int parameters_ = 0;
};

} // namespace am

#endif // ACTORMESH_ACTORS_PROGRAM_HPP
