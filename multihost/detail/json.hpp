/// A small JSON value with a parser and a writer, for checkpoint indexes. Internal.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace am::detail {

/// A JSON value: null, bool, number (integers kept exact), string, array or object (keys sorted).
struct json {
  using array_t = std::vector<json>;
  using object_t = std::map<std::string, json>;
  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, array_t, object_t> value = nullptr;

  json() = default;
  json(std::nullptr_t) {}
  json(bool b) : value(b) {}
  json(int i) : value(static_cast<std::int64_t>(i)) {}
  json(std::int64_t i) : value(i) {}
  json(double d) : value(d) {}
  json(const char* s) : value(std::string(s)) {}
  json(std::string s) : value(std::move(s)) {}
  json(array_t a) : value(std::move(a)) {}
  json(object_t o) : value(std::move(o)) {}

  /// Typed access; each throws am::value_error naming `what` when the value has another type.
  std::int64_t as_int(const char* what) const;
  const std::string& as_string(const char* what) const;
  const array_t& as_array(const char* what) const;
  const object_t& as_object(const char* what) const;
  /// The member `key` of an object; am::value_error when absent.
  const json& at(const std::string& key) const;

  /// Compact JSON text.
  std::string dump() const;
  /// Parses JSON text; am::value_error ("invalid JSON at offset N: ...") on bad input.
  static json parse(std::string_view text);
};

} // namespace am::detail
