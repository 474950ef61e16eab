#include "multihost/detail/json.hpp"

#include "actors/errors.hpp"

#include <cctype>
#include <charconv>
#include <cstdio>

namespace am::detail {

namespace {

[[noreturn]] void type_mismatch(const char* what, const char* wanted) {
  throw value_error(std::string("checkpoint index: ") + what + " must be " + wanted);
}

void dump_string(const std::string& s, std::string& out) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

void dump_value(const json& j, std::string& out) {
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::nullptr_t>)
          out += "null";
        else if constexpr (std::is_same_v<V, bool>)
          out += v ? "true" : "false";
        else if constexpr (std::is_same_v<V, std::int64_t>)
          out += std::to_string(v);
        else if constexpr (std::is_same_v<V, double>) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.17g", v);
          out += buf;
        } else if constexpr (std::is_same_v<V, std::string>)
          dump_string(v, out);
        else if constexpr (std::is_same_v<V, json::array_t>) {
          out += '[';
          for (std::size_t k = 0; k < v.size(); ++k) {
            if (k)
              out += ',';
            dump_value(v[k], out);
          }
          out += ']';
        } else {
          out += '{';
          bool first = true;
          for (auto& [key, val] : v) {
            if (!first)
              out += ',';
            first = false;
            dump_string(key, out);
            out += ':';
            dump_value(val, out);
          }
          out += '}';
        }
      },
      j.value);
}

class parser {
public:
  explicit parser(std::string_view t) : t_(t) {}

  json document() {
    json j = value(0);
    skip();
    if (at_ != t_.size())
      fail("trailing characters");
    return j;
  }

private:
  [[noreturn]] void fail(const std::string& why) const {
    throw value_error("invalid JSON at offset " + std::to_string(at_) + ": " + why);
  }
  void skip() {
    while (at_ < t_.size() && (t_[at_] == ' ' || t_[at_] == '\n' || t_[at_] == '\r' || t_[at_] == '\t'))
      ++at_;
  }
  bool eat(char c) {
    skip();
    if (at_ < t_.size() && t_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c))
      fail(std::string("expected '") + c + "'");
  }
  bool word(std::string_view w) {
    if (t_.substr(at_, w.size()) == w) {
      at_ += w.size();
      return true;
    }
    return false;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (at_ >= t_.size())
        fail("unterminated string");
      char c = t_[at_++];
      if (c == '"')
        return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= t_.size())
        fail("unterminated escape");
      char e = t_[at_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          if (at_ + 4 > t_.size())
            fail("short \\u escape");
          unsigned code = 0;
          auto r = std::from_chars(t_.data() + at_, t_.data() + at_ + 4, code, 16);
          if (r.ptr != t_.data() + at_ + 4 || code > 0x7F)
            fail("only ASCII \\u escapes are supported");
          out += static_cast<char>(code);
          at_ += 4;
          break;
        }
        default: fail("bad escape");
      }
    }
  }
  json value(int depth) {
    if (depth > 64)
      fail("nested too deeply");
    skip();
    if (at_ >= t_.size())
      fail("unexpected end");
    char c = t_[at_];
    if (c == '{') {
      ++at_;
      json::object_t o;
      if (eat('}'))
        return o;
      do {
        skip();
        std::string key = string();
        expect(':');
        o[key] = value(depth + 1);
      } while (eat(','));
      expect('}');
      return o;
    }
    if (c == '[') {
      ++at_;
      json::array_t a;
      if (eat(']'))
        return a;
      do
        a.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
      return a;
    }
    if (c == '"')
      return string();
    if (word("true"))
      return true;
    if (word("false"))
      return false;
    if (word("null"))
      return nullptr;
    std::size_t end = at_;
    bool integral = true;
    while (end < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[end])) || t_[end] == '-' || t_[end] == '+'
                               || t_[end] == '.' || t_[end] == 'e' || t_[end] == 'E')) {
      if (t_[end] == '.' || t_[end] == 'e' || t_[end] == 'E')
        integral = false;
      ++end;
    }
    if (end == at_)
      fail("unexpected character");
    if (integral) {
      std::int64_t i = 0;
      auto r = std::from_chars(t_.data() + at_, t_.data() + end, i);
      if (r.ptr != t_.data() + end)
        fail("bad number");
      at_ = end;
      return i;
    }
    double d = 0;
    auto r = std::from_chars(t_.data() + at_, t_.data() + end, d);
    if (r.ptr != t_.data() + end)
      fail("bad number");
    at_ = end;
    return d;
  }

  std::string_view t_;
  std::size_t at_ = 0;
};

} // namespace

std::int64_t json::as_int(const char* what) const {
  if (auto p = std::get_if<std::int64_t>(&value))
    return *p;
  type_mismatch(what, "an integer");
}

const std::string& json::as_string(const char* what) const {
  if (auto p = std::get_if<std::string>(&value))
    return *p;
  type_mismatch(what, "a string");
}

const json::array_t& json::as_array(const char* what) const {
  if (auto p = std::get_if<array_t>(&value))
    return *p;
  type_mismatch(what, "an array");
}

const json::object_t& json::as_object(const char* what) const {
  if (auto p = std::get_if<object_t>(&value))
    return *p;
  type_mismatch(what, "an object");
}

const json& json::at(const std::string& key) const {
  auto& o = as_object(key.c_str());
  auto it = o.find(key);
  if (it == o.end())
    throw value_error("checkpoint index: missing field '" + key + "'");
  return it->second;
}

std::string json::dump() const {
  std::string out;
  dump_value(*this, out);
  return out;
}

json json::parse(std::string_view text) { return parser(text).document(); }

} // namespace am::detail
