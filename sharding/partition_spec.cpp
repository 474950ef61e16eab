#include "actormesh/sharding/partition_spec.hpp"

#include "actormesh/actors/errors.hpp"
#include "sharding/detail/py_format.hpp"

#include <cctype>

namespace am {

namespace {

std::vector<std::string> canonical_axes(std::vector<std::string> axes) {
  // Python's falsy '' is None; a lone name inside a tuple is the bare name (same representation).
  if (axes.size() == 1 && axes[0].empty())
    axes.clear();
  return axes;
}

std::string raw_repr(const raw_spec_entry& e) {
  switch (e.form) {
    case raw_spec_entry::kind::none: return "None";
    case raw_spec_entry::kind::name: return detail::py_repr(e.name);
    case raw_spec_entry::kind::tuple: {
      std::vector<std::string> items;
      for (const auto& x : e.elements)
        items.push_back(raw_repr(x));
      return detail::py_tuple(items);
    }
  }
  return "?";
}

// JAX's canonicalize_partition plus its checks: falsy -> None, one-element tuple -> its element,
// and a tuple may hold only names.
spec_entry canonicalize(const raw_spec_entry& raw) {
  using kind = raw_spec_entry::kind;
  if (raw.form == kind::none)
    return spec_entry{};
  if (raw.form == kind::name)
    return spec_entry{raw.name};
  if (raw.elements.empty())
    return spec_entry{};
  const raw_spec_entry* tuple = &raw;
  if (raw.elements.size() == 1) {
    const auto& only = raw.elements[0];
    if (only.form != kind::tuple)
      return canonicalize(only);
    tuple = &only;
  }
  std::vector<std::string> names;
  for (const auto& element : tuple->elements) {
    if (element.form == kind::tuple)
      throw value_error("A tuple inside PartitionSpec cannot contain a nested tuple. Got partition: " +
                        raw_repr(*tuple) + " and the nested tuple: " + raw_repr(element));
    if (element.form == kind::none || element.name.empty())
      throw value_error("A tuple inside PartitionSpec can only contain mesh axis names, but " +
                        raw_repr(*tuple) + " contains " + raw_repr(element));
    names.push_back(element.name);
  }
  return spec_entry{std::move(names)};
}

// Recursive-descent parser of the command-line syntax.
class spec_parser {
public:
  explicit spec_parser(std::string_view text) : text_(text) {}

  std::vector<raw_spec_entry> parse() {
    std::vector<raw_spec_entry> out;
    skip_blanks();
    if (at_end())
      return out;
    out.push_back(parse_entry());
    while (!at_end()) {
      expect(',');
      out.push_back(parse_entry());
    }
    return out;
  }

private:
  raw_spec_entry parse_entry() {
    skip_blanks();
    if (at_end() || peek() == ',' || peek() == ')')
      fail("empty entry");
    raw_spec_entry first = parse_atom();
    skip_blanks();
    if (at_end() || peek() != '+')
      return first;
    std::vector<raw_spec_entry> parts{std::move(first)};
    while (!at_end() && peek() == '+') {
      ++pos_;
      skip_blanks();
      if (at_end() || peek() == ',' || peek() == '+' || peek() == ')')
        fail("missing axis name after '+'");
      parts.push_back(parse_atom());
      skip_blanks();
    }
    return raw_spec_entry::make_tuple(std::move(parts));
  }

  raw_spec_entry parse_atom() {
    skip_blanks();
    if (peek() == '(') {
      // JAX refuses a tuple inside a tuple anyway; the bound keeps `((((...` from exhausting the stack.
      if (++depth_ > max_depth)
        fail("parentheses nested deeper than " + std::to_string(max_depth) + " levels");
      ++pos_;
      std::vector<raw_spec_entry> parts;
      skip_blanks();
      if (!at_end() && peek() == ')') {
        ++pos_;
        --depth_;
        return raw_spec_entry::make_tuple({});
      }
      parts.push_back(parse_entry());
      skip_blanks();
      bool trailing_comma = false;
      while (!at_end() && peek() == ',') {
        ++pos_;
        skip_blanks();
        if (!at_end() && peek() == ')') {
          trailing_comma = true; // Python's one-element tuple: (a,)
          break;
        }
        parts.push_back(parse_entry());
        skip_blanks();
      }
      expect(')');
      --depth_;
      if (parts.size() == 1 && !trailing_comma)
        return std::move(parts.front()); // Python: (a) is a, not a tuple
      return raw_spec_entry::make_tuple(std::move(parts));
    }
    const std::size_t start = pos_;
    while (!at_end() && !is_special(peek()))
      ++pos_;
    if (pos_ == start)
      fail(std::string("unexpected '") + peek() + "'");
    std::string word(text_.substr(start, pos_ - start));
    if (word == "none" || word == "None")
      return raw_spec_entry::make_none();
    return raw_spec_entry::make_name(std::move(word));
  }

  static bool is_special(char c) {
    return c == ',' || c == '+' || c == '(' || c == ')' || std::isspace(static_cast<unsigned char>(c));
  }

  void expect(char c) {
    skip_blanks();
    if (at_end())
      fail(std::string("expected '") + c + "' before the end");
    if (peek() != c)
      fail(std::string("expected '") + c + "', got '" + peek() + "'");
    ++pos_;
  }

  void skip_blanks() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(peek())))
      ++pos_;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw value_error("Invalid partition spec '" + std::string(text_) + "' at position " +
                      std::to_string(pos_ + 1) + ": " + why +
                      "; write entries separated by ',', none for an unsharded dimension and a+b for a "
                      "tuple of mesh axes");
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }

  static constexpr int max_depth = 16;

  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

} // namespace

spec_entry::spec_entry(const char* name) : spec_entry(std::string(name ? name : "")) {}

spec_entry::spec_entry(std::string name) {
  if (!name.empty())
    axes_.push_back(std::move(name));
}

spec_entry::spec_entry(std::initializer_list<std::string> axes)
    : axes_(canonical_axes(std::vector<std::string>(axes))) {}

spec_entry::spec_entry(std::vector<std::string> axes) : axes_(canonical_axes(std::move(axes))) {}

std::string spec_entry::to_string() const {
  if (axes_.empty())
    return "None";
  if (axes_.size() == 1)
    return detail::py_repr(axes_[0]);
  std::vector<std::string> items;
  for (const auto& a : axes_)
    items.push_back(detail::py_repr(a));
  return detail::py_tuple(items);
}

partition_spec partition_spec::from_raw(const std::vector<raw_spec_entry>& raw) {
  std::vector<spec_entry> entries;
  entries.reserve(raw.size());
  for (const auto& r : raw)
    entries.push_back(canonicalize(r));
  return partition_spec(std::move(entries));
}

std::vector<std::string> partition_spec::used_axes() const {
  std::vector<std::string> out;
  for (const auto& e : entries_)
    out.insert(out.end(), e.axes().begin(), e.axes().end());
  return out;
}

std::string partition_spec::to_string() const {
  // JAX: f"P({repr(self._partitions)[1:-1]})", i.e. the tuple repr without its parentheses.
  std::vector<std::string> items;
  for (const auto& e : entries_)
    items.push_back(e.to_string());
  const std::string tuple = detail::py_tuple(items);
  return "P(" + tuple.substr(1, tuple.size() - 2) + ")";
}

std::vector<raw_spec_entry> parse_raw_partition_spec(std::string_view text) {
  return spec_parser(text).parse();
}

partition_spec parse_partition_spec(std::string_view text) {
  return partition_spec::from_raw(parse_raw_partition_spec(text));
}

} // namespace am
