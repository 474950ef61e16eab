#include "actormesh/actors/shape.hpp"

#include <limits>

namespace am {

namespace {

constexpr auto int64_max = std::numeric_limits<std::int64_t>::max();

[[noreturn]] void throw_too_big(const shape_t& shape, std::string_view type) {
  std::string where = "shape " + shape_to_string(shape);
  if (!type.empty())
    where += ", dtype " + std::string(type);
  throw value_error("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size ("
                    + where + ")");
}

} // namespace

std::optional<std::int64_t> try_element_count(std::span<const std::int64_t> shape) noexcept {
  std::int64_t n = 1;
  for (auto d : shape) {
    auto product = d < 0 ? std::nullopt : checked_mul(n, d);
    if (!product)
      return std::nullopt;
    n = *product;
  }
  return n;
}

std::int64_t element_count(const shape_t& shape) {
  if (auto n = try_element_count(shape))
    return *n;
  for (auto d : shape)
    if (d < 0)
      throw value_error("negative dimensions are not allowed");
  throw_too_big(shape, {});
}

std::int64_t byte_size(const shape_t& shape, am::dtype type) {
  if (auto bytes = checked_mul(element_count(shape), static_cast<std::int64_t>(size_of(type))))
    return *bytes;
  throw_too_big(shape, name(type));
}

std::string shape_to_string(const shape_t& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

shape_t parse_shape(std::string_view text) {
  if (text.empty())
    return {};
  auto shape = detail::parse_extents(text, ',', "shape",
                                     "write non-negative integers separated by ',', like 8192,8192");
  element_count(shape);
  return shape;
}

namespace detail {

value_error invalid_text(std::string_view what, std::string_view text, const std::string& reason,
                         std::string_view usage) {
  return value_error("Invalid " + std::string(what) + " '" + std::string(text) + "': " + reason + "; "
                     + std::string(usage));
}

shape_t parse_extents(std::string_view text, char separator, std::string_view what, std::string_view usage) {
  const auto fail = [&](const std::string& reason) { return invalid_text(what, text, reason, usage); };
  shape_t out;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find(separator, start);
    const auto part = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    const auto entry = std::to_string(out.size() + 1);
    if (part.empty())
      throw fail("entry " + entry + " is empty");
    std::int64_t value = 0;
    for (char c : part) {
      if (c < '0' || c > '9')
        throw fail("entry " + entry + " ('" + std::string(part) + "') is not a non-negative integer");
      const auto tens = checked_mul(value, 10);
      if (!tens || __builtin_add_overflow(*tens, c - '0', &value))
        throw fail("entry " + entry + " (" + std::string(part) + ") is larger than " + std::to_string(int64_max));
    }
    out.push_back(value);
    if (end == std::string_view::npos)
      return out;
    start = end + 1;
  }
}

} // namespace detail

} // namespace am
