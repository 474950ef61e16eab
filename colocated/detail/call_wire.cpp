#include "colocated/detail/call_wire.hpp"

#include "actormesh/actors/wire_codec.hpp"
#include "actormesh/actors/errors.hpp"
#include "sharding/detail/sharding_codec.hpp"

namespace am::detail {

namespace {

constexpr std::size_t max_depth = 64;
constexpr std::size_t max_nodes = 1u << 16;
constexpr std::size_t max_rank = 64;
constexpr std::size_t max_name = 4096;

[[noreturn]] void malformed(const std::string& why) {
  throw value_error("malformed colocated call: " + why);
}

void write_def(wire_writer& w, const tree_def& def) {
  w.u8(static_cast<std::uint8_t>(def.node_kind()));
  if (def.node_kind() == tree_def::kind::leaf)
    return;
  w.u64(def.children().size());
  for (auto& child : def.children())
    write_def(w, child);
  for (auto& key : def.keys())
    w.str(key);
}

tree_def read_def(wire_reader& r, std::size_t depth, std::size_t& nodes) {
  if (depth > max_depth)
    malformed("a tree deeper than " + std::to_string(max_depth));
  if (++nodes > max_nodes)
    malformed("a tree of more than " + std::to_string(max_nodes) + " nodes");
  auto code = r.u8();
  if (code > static_cast<std::uint8_t>(tree_def::kind::dict))
    malformed("unknown tree node kind " + std::to_string(code));
  auto kind = static_cast<tree_def::kind>(code);
  if (kind == tree_def::kind::leaf)
    return tree_def::leaf();
  auto n = r.u64();
  if (n > max_nodes)
    malformed(std::to_string(n) + " children");
  std::vector<tree_def> children;
  for (std::uint64_t k = 0; k < n; ++k)
    children.push_back(read_def(r, depth + 1, nodes));
  std::vector<std::string> keys;
  if (kind == tree_def::kind::dict)
    for (std::uint64_t k = 0; k < n; ++k)
      keys.push_back(r.str(max_name));
  return tree_def::node(kind, std::move(children), std::move(keys));
}

void write_specs(wire_writer& w, const spec_tree& specs) {
  write_def(w, specs.def());
  w.u64(specs.leaves().size());
  for (auto& leaf : specs.leaves()) {
    w.u8(static_cast<std::uint8_t>(leaf.dtype));
    w.u64(leaf.shape.size());
    for (auto n : leaf.shape)
      w.u64(static_cast<std::uint64_t>(n));
    if (!leaf.sharding)
      throw value_error("colocated_python: a spec without a sharding cannot travel: " + leaf.to_string());
    write_sharding(w, *leaf.sharding);
  }
}

spec_tree read_specs(wire_reader& r) {
  std::size_t nodes = 0;
  auto def = read_def(r, 0, nodes);
  auto n = r.u64();
  if (n != def.num_leaves())
    malformed(std::to_string(n) + " specs for a tree of " + std::to_string(def.num_leaves()) + " leaves");
  std::vector<shape_dtype_struct> leaves;
  for (std::uint64_t k = 0; k < n; ++k) {
    shape_dtype_struct leaf;
    auto code = r.u8();
    if (code >= dtype_count)
      malformed("unknown dtype code " + std::to_string(code));
    leaf.dtype = static_cast<am::dtype>(code);
    auto rank = r.u64();
    if (rank > max_rank)
      malformed(std::to_string(rank) + " dimensions");
    for (std::uint64_t d = 0; d < rank; ++d) {
      auto extent = static_cast<std::int64_t>(r.u64());
      if (extent < 0)
        malformed("negative dimension " + std::to_string(extent));
      leaf.shape.push_back(extent);
    }
    byte_size(leaf.shape, leaf.dtype); // throws for a size past int64
    leaf.sharding = read_sharding(r);
    leaf.sharding->check_rank(leaf.shape.size());
    leaves.push_back(std::move(leaf));
  }
  return spec_tree(std::move(def), std::move(leaves));
}

} // namespace

std::string encode(const worker_call& c) {
  wire_writer w;
  w.u8(static_cast<std::uint8_t>(c.kind));
  w.str(c.name);
  w.u8(c.is_method ? 1 : 0);
  if (c.is_method) {
    w.u64(c.object.uid);
    w.str(c.object.class_name);
    w.str(c.object.constructor);
    w.str(c.object.arguments);
  }
  write_specs(w, c.in);
  w.i32_list(c.devices);
  if (c.kind == worker_call_kind::async)
    write_specs(w, c.out);
  return w.take();
}

worker_call decode_worker_call(const std::string& bytes) {
  wire_reader r(bytes);
  worker_call c;
  auto kind = r.u8();
  if (kind < static_cast<std::uint8_t>(worker_call_kind::learn)
      || kind > static_cast<std::uint8_t>(worker_call_kind::release_object))
    malformed("unknown call kind " + std::to_string(kind));
  c.kind = static_cast<worker_call_kind>(kind);
  c.name = r.str(max_name);
  c.is_method = r.u8() != 0;
  if (c.is_method) {
    c.object.uid = r.u64();
    c.object.class_name = r.str(max_name);
    c.object.constructor = r.str(max_name);
    c.object.arguments = r.str();
  }
  c.in = read_specs(r);
  c.devices = r.i32_list(max_nodes);
  if (c.kind == worker_call_kind::async)
    c.out = read_specs(r);
  r.finish();
  return c;
}

std::string encode_specs(const spec_tree& specs) {
  wire_writer w;
  write_specs(w, specs);
  return w.take();
}

spec_tree decode_specs(const std::string& bytes) {
  wire_reader r(bytes);
  auto specs = read_specs(r);
  r.finish();
  return specs;
}

} // namespace am::detail
