#include "sharding/detail/lowering.hpp"

#include "actormesh/actors/errors.hpp"
#include "sharding/detail/lowering_state.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <optional>

namespace am::detail {

namespace {

/// Lowers node after node; `pieces_[n]` holds, for node n, one piece per device of its sharding.
class lowerer {
public:
  lowerer(const graph& g, const std::string& name) : g_(g), state_(name, g), pieces_(g.nodes.size()) {}

  plan run() {
    for (std::size_t n = 0; n < g_.nodes.size(); ++n)
      lower_node(static_cast<int>(n));
    std::vector<planned_output> outputs;
    for (int o : g_.outputs) {
      auto& nd = g_.nodes[static_cast<std::size_t>(o)];
      planned_output out{nd.shape, nd.type, nd.layout, {}};
      auto placements = nd.layout->shard_placements(nd.shape);
      for (std::size_t k = 0; k < placements.size(); ++k) {
        auto src = on_own_device(pieces_[static_cast<std::size_t>(o)][k].src, nd.type, placements[k].device);
        out.shards.push_back({placements[k].device, placements[k].index, placements[k].replica_id,
                              state_.bind_output(src)});
      }
      outputs.push_back(std::move(out));
    }
    return state_.finish(std::move(outputs));
  }

private:
  /// `src` itself when its data lives on `d`, else a copy made on `d` (an output shard must be
  /// held by the device it is assigned to).
  value_source on_own_device(const value_source& src, am::dtype type, const device& d) {
    if (src.dev.id == d.id)
      return src;
    int stage = lowering_state::available_stage(src, d);
    auto in = state_.local(src, stage, d);
    return produced(d, stage, state_.slot(stage, d).builder.convert(in, type));
  }

  /// A source for block `want` of node `m` on device `d`, and the stage it is available at.
  value_source require(int m, const device& d, const shard_index& want, int& stage) {
    auto key = std::make_tuple(m, d.id, want_key(want));
    auto it = required_.find(key);
    if (it != required_.end()) {
      stage = it->second.second;
      return it->second.first;
    }
    auto src = state_.assemble(pieces_[static_cast<std::size_t>(m)], d, want, stage);
    required_.emplace(key, std::make_pair(src, stage));
    return src;
  }

  static std::vector<std::int64_t> want_key(const shard_index& b) {
    std::vector<std::int64_t> k;
    for (auto& r : b) {
      k.push_back(r.start);
      k.push_back(r.stop);
    }
    return k;
  }

  value_source produced(const device& d, int stage, std::int32_t instr) {
    value_source s;
    s.dev = d;
    s.stage = stage;
    s.instr = instr;
    return s;
  }

  const node& operand(const node& n, std::size_t k) const {
    return g_.nodes[static_cast<std::size_t>(n.operands[k])];
  }

  void lower_node(int index) {
    auto& n = g_.nodes[static_cast<std::size_t>(index)];
    auto placements = n.layout->shard_placements(n.shape);
    auto& out = pieces_[static_cast<std::size_t>(index)];
    if (n.kind == node_kind::input) {
      for (std::size_t k = 0; k < placements.size(); ++k) {
        value_source s;
        s.argument = true;
        s.arg = static_cast<int>(n.attrs.at(0));
        s.position = static_cast<int>(k);
        s.dev = placements[k].device;
        out.push_back({s, placements[k].index});
      }
      return;
    }
    for (auto& pl : placements)
      out.push_back({lower_block(n, index, pl.device, pl.index), pl.index});
  }

  value_source lower_block(const node& n, int index, const device& d, const shard_index& b) {
    value_type t{n.type, block_shape(b)};
    switch (n.kind) {
      case node_kind::constant: {
        auto& s = state_.slot(0, d);
        return produced(d, 0, s.builder.constant(n.scalar, t));
      }
      case node_kind::random: {
        auto& s = state_.slot(0, d);
        std::vector<std::int64_t> offsets;
        for (auto& r : b)
          offsets.push_back(r.start);
        std::vector<double> range; // uniform's {low, span}, as bit patterns in attrs
        for (auto bits : n.attrs)
          range.push_back(std::bit_cast<double>(bits));
        return produced(d, 0, s.builder.random(n.op, t, n.key, n.shape, offsets, range));
      }
      case node_kind::reshard: {
        int stage = 0;
        return require(n.operands[0], d, b, stage);
      }
      case node_kind::elementwise: return lower_elementwise(n, d, b);
      case node_kind::broadcast: return lower_broadcast(n, d, b);
      case node_kind::transpose: return lower_transpose(n, d, b);
      case node_kind::reshape: return lower_reshape(n, d, b);
      case node_kind::dot: return lower_dot(n, d, b);
      case node_kind::batch_dot: return lower_batch_dot(n, d, b);
      case node_kind::reduce: return lower_reduce(n, index, d, b);
      case node_kind::take: return lower_take(n, d, b);
      case node_kind::iota: {
        auto& s = state_.slot(0, d);
        auto i = s.builder.iota(t);
        if (b[0].start != 0)
          i = s.builder.binary(opcode::add, i, s.builder.constant(static_cast<double>(b[0].start), t));
        return produced(d, 0, i);
      }
      case node_kind::collective:
        throw value_error("a collective over a named axis can only run inside pmap or vmap");
      case node_kind::input: break;
    }
    throw runtime_error("internal: unknown graph node");
  }

  value_source lower_elementwise(const node& n, const device& d, const shard_index& b) {
    std::vector<value_source> srcs;
    int stage = 0;
    for (auto m : n.operands) {
      int st = 0;
      srcs.push_back(require(m, d, b, st));
      stage = std::max(stage, st);
    }
    auto& s = state_.slot(stage, d);
    std::vector<std::int32_t> in;
    for (auto& src : srcs)
      in.push_back(state_.local(src, stage, d));
    std::int32_t r;
    if (n.op == opcode::convert)
      r = s.builder.convert(in[0], n.type);
    else if (n.op == opcode::select)
      r = s.builder.select(in[0], in[1], in[2]);
    else if (in.size() == 1)
      r = s.builder.unary(n.op, in[0]);
    else
      r = s.builder.binary(n.op, in[0], in[1]);
    return produced(d, stage, r);
  }

  value_source lower_broadcast(const node& n, const device& d, const shard_index& b) {
    auto& x = operand(n, 0);
    auto r = n.shape.size(), xr = x.shape.size();
    shard_index want;
    std::vector<std::int64_t> dims;
    for (std::size_t i = 0; i < xr; ++i) {
      auto j = i + r - xr;
      dims.push_back(static_cast<std::int64_t>(j));
      want.push_back(x.shape[i] == 1 ? index_range{0, 1} : b[j]);
    }
    int stage = 0;
    auto src = require(n.operands[0], d, want, stage);
    if (xr == r && block_shape(want) == block_shape(b))
      return src;
    auto& s = state_.slot(stage, d);
    return produced(d, stage, s.builder.broadcast_in_dim(state_.local(src, stage, d), block_shape(b), dims));
  }

  value_source lower_transpose(const node& n, const device& d, const shard_index& b) {
    shard_index want(b.size());
    for (std::size_t i = 0; i < b.size(); ++i)
      want[static_cast<std::size_t>(n.attrs[i])] = b[i];
    int stage = 0;
    auto src = require(n.operands[0], d, want, stage);
    auto& s = state_.slot(stage, d);
    return produced(d, stage, s.builder.transpose(state_.local(src, stage, d), n.attrs));
  }

  value_source lower_reshape(const node& n, const device& d, const shard_index& b) {
    auto& x = operand(n, 0);
    std::size_t k = 0;
    while (k < x.shape.size() && k < n.shape.size() && x.shape[k] == n.shape[k])
      ++k;
    bool tail_full = true;
    for (std::size_t j = k; j < n.shape.size(); ++j)
      tail_full = tail_full && b[j].start == 0 && b[j].stop == n.shape[j];
    shard_index want = full_block(x.shape);
    if (tail_full)
      for (std::size_t j = 0; j < k; ++j)
        want[j] = b[j];
    int stage = 0;
    auto src = require(n.operands[0], d, want, stage);
    auto& s = state_.slot(stage, d);
    auto in = state_.local(src, stage, d);
    if (tail_full)
      return produced(d, stage, s.builder.reshape(in, block_shape(b)));
    auto whole = s.builder.reshape(in, n.shape);
    if (b == full_block(n.shape))
      return produced(d, stage, whole);
    std::vector<std::int64_t> starts, limits;
    for (auto& r : b) {
      starts.push_back(r.start);
      limits.push_back(r.stop);
    }
    return produced(d, stage, s.builder.slice(whole, starts, limits));
  }

  /// Each output row of the block comes from one row of the operand (imported from wherever that
  /// row lives) or is zero; the rows are joined along dim 0.
  value_source lower_take(const node& n, const device& d, const shard_index& b) {
    std::vector<std::optional<value_source>> rows;
    int stage = 0;
    for (auto r = b[0].start; r < b[0].stop; ++r) {
      auto from = n.attrs.at(static_cast<std::size_t>(r));
      if (from < 0) {
        rows.push_back(std::nullopt);
        continue;
      }
      shard_index want = b;
      want[0] = {from, from + 1};
      int st = 0;
      rows.push_back(require(n.operands[0], d, want, st));
      stage = std::max(stage, st);
    }
    auto& s = state_.slot(stage, d);
    auto row_shape = block_shape(b);
    row_shape[0] = 1;
    std::vector<std::int32_t> parts;
    for (auto& src : rows)
      parts.push_back(src ? state_.local(*src, stage, d) : s.builder.constant(0, value_type{n.type, row_shape}));
    if (parts.size() == 1)
      return produced(d, stage, parts.front());
    return produced(d, stage, s.builder.concatenate(parts, 0));
  }

  /// The operand of a transpose node swapping the last two dims that feeds operand `k` of dot node
  /// `n` on a CPU device in float32/float64, whose BLAS call takes it as a transpose flag instead of
  /// a copy (the transpose, then unused there, is dropped by the CPU compiler); else -1.
  int folded_transpose(const node& n, std::size_t k, const device& d) const {
    auto& o = operand(n, k);
    if (d.platform != am::platform::cpu || (n.type != am::dtype::float32 && n.type != am::dtype::float64)
        || o.kind != node_kind::transpose)
      return -1;
    auto r = static_cast<std::int64_t>(o.shape.size());
    for (std::int64_t i = 0; i + 2 < r; ++i)
      if (o.attrs[static_cast<std::size_t>(i)] != i)
        return -1;
    bool swaps = o.attrs[static_cast<std::size_t>(r - 2)] == r - 1 && o.attrs[static_cast<std::size_t>(r - 1)] == r - 2;
    return swaps ? o.operands[0] : -1;
  }

  value_source lower_dot(const node& n, const device& d, const shard_index& b) {
    auto& x = operand(n, 0);
    auto k = x.shape[1];
    int tx = folded_transpose(n, 0, d), ty = folded_transpose(n, 1, d);
    int sx = 0, sy = 0;
    auto xs = tx >= 0 ? require(tx, d, {{0, k}, b[0]}, sx) : require(n.operands[0], d, {b[0], {0, k}}, sx);
    auto ys = ty >= 0 ? require(ty, d, {b[1], {0, k}}, sy) : require(n.operands[1], d, {{0, k}, b[1]}, sy);
    int stage = std::max(sx, sy);
    auto& s = state_.slot(stage, d);
    auto xi = state_.local(xs, stage, d);
    auto yi = state_.local(ys, stage, d);
    return produced(d, stage, s.builder.dot(xi, yi, tx >= 0, ty >= 0));
  }

  /// One batched dot of the block's rows of x and y (or all of a 2-D y): one BLAS call per row on
  /// CPU devices, one strided-batched cuBLAS call on CUDA devices; transposed operands folded as for
  /// lower_dot.
  value_source lower_batch_dot(const node& n, const device& d, const shard_index& b) {
    auto& x = operand(n, 0);
    auto& y = operand(n, 1);
    bool y_batched = y.shape.size() == 3;
    auto k = x.shape[2];
    int tx = folded_transpose(n, 0, d), ty = folded_transpose(n, 1, d);
    int sx = 0, sy = 0;
    auto xs = tx >= 0 ? require(tx, d, {b[0], {0, k}, b[1]}, sx) : require(n.operands[0], d, {b[0], b[1], {0, k}}, sx);
    shard_index y_block = y_batched ? (ty >= 0 ? shard_index{b[0], b[2], {0, k}} : shard_index{b[0], {0, k}, b[2]})
                                    : (ty >= 0 ? shard_index{b[2], {0, k}} : shard_index{{0, k}, b[2]});
    auto ys = require(ty >= 0 ? ty : n.operands[1], d, y_block, sy);
    int stage = std::max(sx, sy);
    auto& s = state_.slot(stage, d);
    auto xi = state_.local(xs, stage, d);
    auto yi = state_.local(ys, stage, d);
    return produced(d, stage, s.builder.dot(xi, yi, tx >= 0, ty >= 0));
  }

  /// The partial reductions of node `index`: one per distinct block of its operand, computed where
  /// that block already is. Each partial's piece block covers the kept dims; `tiles` says which
  /// block of the reduced dims it came from.
  struct partials {
    std::vector<piece> pieces;
    std::vector<std::vector<std::int64_t>> tiles;
  };

  const partials& partials_of(const node& n, int index) {
    auto it = partials_.find(index);
    if (it != partials_.end())
      return it->second;
    partials p;
    std::vector<shard_index> seen;
    for (auto& pc : pieces_[static_cast<std::size_t>(n.operands[0])]) {
      if (std::find(seen.begin(), seen.end(), pc.block) != seen.end())
        continue;
      seen.push_back(pc.block);
      int stage = pc.src.argument ? 0 : pc.src.stage;
      auto& s = state_.slot(stage, pc.src.dev);
      auto in = state_.local(pc.src, stage, pc.src.dev);
      auto r = s.builder.reduce(n.op, in, n.attrs);
      shard_index kept;
      std::vector<std::int64_t> tile;
      for (std::size_t dim = 0; dim < pc.block.size(); ++dim) {
        if (std::binary_search(n.attrs.begin(), n.attrs.end(), static_cast<std::int64_t>(dim))) {
          tile.push_back(pc.block[dim].start);
        } else {
          kept.push_back(pc.block[dim]);
        }
      }
      p.pieces.push_back({produced(pc.src.dev, stage, r), kept});
      p.tiles.push_back(tile);
    }
    return partials_.emplace(index, std::move(p)).first->second;
  }

  /// Block `b` of reduction `index` for device `d`. Within one process every device combines the
  /// partials itself (device copies are cheap, and the combining runs in parallel). When the
  /// partials lie on other processes, the first device that asks combines them and the others take
  /// the block from there: combining on every device would move every partial to every device,
  /// n * (n - 1) transfers between pairs of processes (each pair with a communicator of its own),
  /// where this moves 2 * (n - 1).
  value_source lower_reduce(const node& n, int index, const device& d, const shard_index& b) {
    const auto& p = partials_of(n, index);
    const bool across_processes = std::any_of(p.pieces.begin(), p.pieces.end(), [&](const piece& pc) {
      return pc.src.dev.process_index != d.process_index;
    });
    if (!across_processes)
      return combine_partials(n, index, d, b);
    const auto key = std::make_pair(index, want_key(b));
    if (auto it = reduced_.find(key); it != reduced_.end())
      return it->second;
    return reduced_.emplace(key, combine_partials(n, index, d, b)).first->second;
  }

  value_source combine_partials(const node& n, int index, const device& d, const shard_index& b) {
    auto& p = partials_of(n, index);
    std::map<std::vector<std::int64_t>, std::vector<piece>> groups;
    for (std::size_t k = 0; k < p.pieces.size(); ++k)
      groups[p.tiles[k]].push_back(p.pieces[k]);
    std::vector<value_source> parts;
    int stage = 0;
    for (auto& [tile, pieces] : groups) {
      int st = 0;
      parts.push_back(state_.assemble(pieces, d, b, st));
      stage = std::max(stage, st);
    }
    if (parts.size() == 1)
      return parts.front();
    auto combine = n.op == opcode::reduce_sum ? opcode::add
                   : n.op == opcode::reduce_max ? opcode::maximum : opcode::minimum;
    auto& s = state_.slot(stage, d);
    auto acc = state_.local(parts[0], stage, d);
    for (std::size_t k = 1; k < parts.size(); ++k)
      acc = s.builder.binary(combine, acc, state_.local(parts[k], stage, d));
    return produced(d, stage, acc);
  }

  const graph& g_;
  lowering_state state_;
  std::vector<std::vector<piece>> pieces_;
  std::map<std::tuple<int, int, std::vector<std::int64_t>>, std::pair<value_source, int>> required_;
  std::map<int, partials> partials_;
  /// Combined reductions by (node, block): the source lower_reduce hands every device.
  std::map<std::pair<int, std::vector<std::int64_t>>, value_source> reduced_;
};

} // namespace

plan lower(const graph& g, const std::string& name) {
  return lowerer(g, name).run();
}

} // namespace am::detail
