#include "actormesh/multihost/tree_def.hpp"

#include "actormesh/actors/errors.hpp"

namespace am {

namespace {

/// Python's repr of a string key: 'a' (single quotes; a quote inside escaped).
std::string quoted(const std::string& key) {
  std::string out = "'";
  for (char c : key) {
    if (c == '\'' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "'";
}

std::string format_node(const tree_def& t, const std::function<std::string(std::size_t, bool)>& leaf_text,
                        std::size_t& next, bool top) {
  using kind = tree_def::kind;
  if (t.node_kind() == kind::leaf)
    return leaf_text(next++, top);
  if (t.node_kind() == kind::none)
    return "None";
  const auto& children = t.children();
  std::string open = t.node_kind() == kind::tuple ? "(" : t.node_kind() == kind::list ? "[" : "{";
  std::string close = t.node_kind() == kind::tuple ? ")" : t.node_kind() == kind::list ? "]" : "}";
  std::string out = open;
  for (std::size_t k = 0; k < children.size(); ++k) {
    if (k)
      out += ", ";
    if (t.node_kind() == kind::dict)
      out += quoted(t.keys()[k]) + ": ";
    out += format_node(children[k], leaf_text, next, false);
  }
  if (t.node_kind() == kind::tuple && children.size() == 1)
    out += ",";
  return out + close;
}

} // namespace

tree_def tree_def::none() {
  tree_def t;
  t.kind_ = kind::none;
  t.leaves_ = 0;
  return t;
}

tree_def tree_def::node(kind k, std::vector<tree_def> children, std::vector<std::string> keys) {
  if (k == kind::leaf || k == kind::none)
    throw value_error("tree_def::node: a leaf and None have no children; use tree_def::leaf() or tree_def::none()");
  if (k == kind::dict ? keys.size() != children.size() : !keys.empty())
    throw value_error("tree_def::node: a dict needs one key per child, other nodes none");
  tree_def t;
  t.kind_ = k;
  t.leaves_ = 0;
  for (auto& c : children)
    t.leaves_ += c.leaves_;
  t.children_ = std::move(children);
  t.keys_ = std::move(keys);
  return t;
}

std::string tree_def::to_string() const {
  return "PyTreeDef(" + format([](std::size_t, bool) { return std::string("*"); }) + ")";
}

std::string tree_def::format(const std::function<std::string(std::size_t leaf, bool top)>& leaf_text) const {
  std::size_t next = 0;
  return format_node(*this, leaf_text, next, true);
}

} // namespace am
