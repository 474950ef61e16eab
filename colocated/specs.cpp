#include "actormesh/colocated/specs.hpp"

#include "actormesh/actors/errors.hpp"

namespace am {

namespace {

std::string python_shape(const shape_t& s) {
  std::string out = "(";
  for (std::size_t k = 0; k < s.size(); ++k)
    out += (k ? ", " : "") + std::to_string(s[k]);
  return out + (s.size() == 1 ? ",)" : ")");
}

bool same_sharding(const sharding_ptr& a, const sharding_ptr& b) {
  if (a == b)
    return true;
  if (!a || !b)
    return false;
  return a->device_assignment() == b->device_assignment() && a->to_string() == b->to_string();
}

} // namespace

shape_dtype_struct shape_dtype_struct::of(const array& a) {
  return {a.shape(), a.dtype(), a.sharding()};
}

std::string shape_dtype_struct::to_string() const {
  return "ShapeDtypeStruct(shape=" + python_shape(shape) + ", dtype=" + std::string(name(dtype))
         + ", sharding=" + (sharding ? sharding->to_string() : std::string("None")) + ")";
}

bool operator==(const shape_dtype_struct& a, const shape_dtype_struct& b) {
  return a.shape == b.shape && a.dtype == b.dtype && same_sharding(a.sharding, b.sharding);
}

spec_tree::spec_tree() : def_(tree_def::node(tree_def::kind::tuple, {})) {}

spec_tree::spec_tree(shape_dtype_struct leaf) : def_(tree_def::leaf()), leaves_{std::move(leaf)} {}

spec_tree::spec_tree(tree_def def, std::vector<shape_dtype_struct> leaves)
    : def_(std::move(def)), leaves_(std::move(leaves)) {
  if (def_.num_leaves() != leaves_.size())
    throw value_error("spec_tree: " + def_.to_string() + " has " + std::to_string(def_.num_leaves())
                      + " leaves but " + std::to_string(leaves_.size()) + " specs were given");
}

namespace {

spec_tree container(tree_def::kind k, const std::vector<spec_tree>& children) {
  std::vector<tree_def> defs;
  std::vector<shape_dtype_struct> leaves;
  for (auto& c : children) {
    defs.push_back(c.def());
    leaves.insert(leaves.end(), c.leaves().begin(), c.leaves().end());
  }
  return spec_tree(tree_def::node(k, std::move(defs)), std::move(leaves));
}

} // namespace

spec_tree spec_tree::tuple(const std::vector<spec_tree>& children) {
  return container(tree_def::kind::tuple, children);
}

spec_tree spec_tree::list(const std::vector<spec_tree>& children) {
  return container(tree_def::kind::list, children);
}

spec_tree spec_tree::operator[](std::size_t k) const {
  auto& children = def_.children();
  if (k >= children.size())
    throw value_error("spec_tree: child " + std::to_string(k) + " of " + def_.to_string() + " does not exist");
  std::size_t first = 0;
  for (std::size_t j = 0; j < k; ++j)
    first += children[j].num_leaves();
  auto begin = leaves_.begin() + static_cast<std::ptrdiff_t>(first);
  return spec_tree(children[k], {begin, begin + static_cast<std::ptrdiff_t>(children[k].num_leaves())});
}

std::string spec_tree::to_string() const {
  return def_.format([this](std::size_t k, bool) { return leaves_[k].to_string(); });
}

namespace detail {

std::vector<shape_dtype_struct> specs_of(const std::vector<array>& leaves) {
  std::vector<shape_dtype_struct> out;
  out.reserve(leaves.size());
  for (auto& a : leaves)
    out.push_back(shape_dtype_struct::of(a));
  return out;
}

} // namespace detail

} // namespace am
