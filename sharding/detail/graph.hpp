/// The global-level dataflow graph of a traced function (or of one eager operation): operations on
/// whole arrays with their result shapes, dtypes and shardings. Lowering turns it into per-shard
/// programs (sharding/detail/lowering.hpp).
#ifndef ACTORMESH_SHARDING_DETAIL_GRAPH_HPP
#define ACTORMESH_SHARDING_DETAIL_GRAPH_HPP

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/opcode.hpp"
#include "actormesh/sharding/sharding.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace am::detail {

/// What a graph node computes, on whole arrays.
enum class node_kind : std::uint8_t {
  input,       ///< argument number `attrs[0]`
  constant,    ///< every element = `scalar` (a weakly typed scalar operand, already broadcast)
  elementwise, ///< `op` (an elementwise opcode, convert included) on same-shape operands
  broadcast,   ///< numpy broadcasting of operand 0 to the node's shape
  reshard,     ///< operand 0 laid out by the node's sharding
  transpose,   ///< attrs = permutation
  reshape,     ///< same elements, the node's shape
  reduce,      ///< `op` in reduce_sum/max/min over attrs (sorted dims of operand 0)
  dot,         ///< 2-D matrix product
  batch_dot,   ///< [B, m, k] x [B, k, n] (or [k, n], the same for every b) -> [B, m, n]
  random,      ///< `op` in random_uniform/normal with key `key`; attrs: empty, or a float uniform's
               ///< {low, span} as the bit patterns of doubles
  take,        ///< rows of operand 0 along dim 0: output row i is row attrs[i] (-1: zeros)
  iota,        ///< 1-D, element i = i
  collective,  ///< a collective over a named axis (parallel/): only inside a pmap/vmap trace, whose
               ///< batching rewrite replaces it; attrs[0] identifies it there. Never lowered.
};

/// One node: inputs by index, the result's abstract value, and parameters.
struct node {
  node_kind kind = node_kind::input;
  opcode op = opcode::constant;
  std::vector<int> operands;
  shape_t shape;
  am::dtype type = am::dtype::float32;
  sharding_ptr layout;
  std::vector<std::int64_t> attrs;
  double scalar = 0;
  std::uint64_t key = 0;
};

/// A graph: nodes in dependency order, the input nodes (one per argument, in order) and outputs.
struct graph {
  std::vector<node> nodes;
  std::vector<int> inputs;
  std::vector<int> outputs;

  /// Appends a node and returns its index.
  int add(node n) {
    nodes.push_back(std::move(n));
    return static_cast<int>(nodes.size() - 1);
  }
};

/// A readable listing of a graph, for debugging and `lowered_text`.
std::string to_string(const graph& g);

} // namespace am::detail

#endif // ACTORMESH_SHARDING_DETAIL_GRAPH_HPP
