#include "actormesh/multihost/detail/data_tree.hpp"

namespace am::detail {

bool is_global_non_addressable(const tree_leaf& leaf) {
  return std::holds_alternative<array>(leaf) && !std::get<array>(leaf).is_fully_addressable();
}

host_array leaf_on_host(const tree_leaf& leaf) {
  if (std::holds_alternative<host_array>(leaf))
    return std::get<host_array>(leaf);
  return std::get<array>(leaf).to_host();
}

namespace {

std::string aval(am::dtype type, const std::vector<std::int64_t>& shape) {
  std::string out = std::string(am::name(type)) + "[";
  for (std::size_t k = 0; k < shape.size(); ++k)
    out += (k ? "," : "") + std::to_string(shape[k]);
  return out + "]";
}

} // namespace

std::string leaf_signature(const tree_leaf& leaf) {
  if (std::holds_alternative<host_array>(leaf)) {
    auto& h = std::get<host_array>(leaf);
    return aval(h.dtype(), h.shape());
  }
  auto& a = std::get<array>(leaf);
  return (a.is_fully_addressable() ? "" : "global ") + aval(a.dtype(), a.shape());
}

std::string tree_signature(const data_tree& t) {
  return t.def.format([&](std::size_t k, bool) { return leaf_signature(t.leaves[k]); });
}

} // namespace am::detail
