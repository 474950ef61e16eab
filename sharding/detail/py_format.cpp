#include "sharding/detail/py_format.hpp"

#include <cmath>

namespace am::detail {

std::string py_repr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (char c : text) {
    if (c == '\\' || c == quote)
      out += '\\';
    out += c;
  }
  out += quote;
  return out;
}

std::string py_tuple(const std::vector<std::string>& items) {
  std::string out = "(";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += items[i];
  }
  if (items.size() == 1)
    out += ',';
  out += ')';
  return out;
}

std::string py_int_tuple(const std::vector<std::int64_t>& values) {
  std::vector<std::string> items;
  items.reserve(values.size());
  for (auto v : values)
    items.push_back(std::to_string(v));
  return py_tuple(items);
}

std::string py_int_list(const std::vector<std::int64_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += std::to_string(values[i]);
  }
  out += ']';
  return out;
}

std::int64_t py_round(double x) noexcept {
  const double lower = std::floor(x);
  const double diff = x - lower;
  double r;
  if (diff < 0.5)
    r = lower;
  else if (diff > 0.5)
    r = lower + 1.0;
  else
    r = (std::fmod(lower, 2.0) == 0.0) ? lower : lower + 1.0;
  return static_cast<std::int64_t>(r);
}

} // namespace am::detail
