/// numpy's Dragon4 float text in unique mode. Shortest digits come from std::to_chars (Ryu) for float
/// and double, and from a search over printf's correctly rounded digits for the 16-bit types; rounding
/// to a precision uses printf, which like Dragon4 rounds the exact binary value half to even.
#include "sharding/detail/numpy_float_format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "actormesh/actors/float16.hpp"

namespace am::detail {

namespace {

// Parses printf/to_chars scientific text of a non-negative value ("1.25e-05", "3e+02") into digits.
decimal_digits parse_scientific(const char* text) {
  decimal_digits d;
  const char* p = text;
  for (; *p != 'e' && *p != '\0'; ++p)
    if (*p != '.') d.digits += *p;
  if (*p == 'e') d.exponent = std::atoi(p + 1);
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  if (d.digits == "0") d.exponent = 0;
  return d;
}

// Shortest digits of a 16-bit float, as Dragon4 finds them: for 1, 2, ... digits, the decimals just
// below and above the value (the nearer first) are tried, and one counts when reading it back (round
// to nearest even) gives the value again, so a decimal on the boundary counts when the value is even.
template <int exp_bits, int man_bits>
decimal_digits shortest_half(double magnitude) {
  const std::uint16_t bits = narrow_float_bits<exp_bits, man_bits>(magnitude);
  const auto round_trips = [&](const char* text) {
    return narrow_float_bits<exp_bits, man_bits>(std::strtod(text, nullptr)) == bits;
  };
  char buf[64];
  std::int64_t scale = 1;  // 10^(p-1)
  for (int p = 1; p <= 17; ++p, scale *= 10) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, magnitude);  // the nearest p-digit decimal
    if (round_trips(buf)) return parse_scientific(buf);
    const decimal_digits nearest = parse_scientific(buf);
    std::int64_t m = std::stoll(nearest.digits);
    for (std::size_t k = nearest.digits.size(); k < static_cast<std::size_t>(p); ++k) m *= 10;
    int e = nearest.exponent;
    m += std::strtod(buf, nullptr) > magnitude ? -1 : 1;  // the other side of the value
    if (m == 10 * scale) m = scale, ++e;
    if (m < scale) m = 10 * scale - 1, --e;
    if (m == 0) continue;
    std::snprintf(buf, sizeof buf, "%llde%d", static_cast<long long>(m), e - (p - 1));
    if (round_trips(buf)) {
      decimal_digits d;
      d.digits = std::to_string(m);
      while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
      d.exponent = e;
      return d;
    }
  }
  std::snprintf(buf, sizeof buf, "%.16e", magnitude);
  return parse_scientific(buf);
}

// Splits digits into the whole part and the fraction of the positional form.
void split_positional(const decimal_digits& d, std::string& whole, std::string& fraction) {
  if (d.exponent < 0) {
    whole = "0";
    fraction = std::string(static_cast<std::size_t>(-d.exponent - 1), '0') + d.digits;
  } else if (static_cast<std::size_t>(d.exponent) + 1 >= d.digits.size()) {
    whole = d.digits + std::string(static_cast<std::size_t>(d.exponent) + 1 - d.digits.size(), '0');
    fraction.clear();
  } else {
    whole = d.digits.substr(0, static_cast<std::size_t>(d.exponent) + 1);
    fraction = d.digits.substr(static_cast<std::size_t>(d.exponent) + 1);
  }
}

// Applies min_digits/precision padding and trimming to a fraction; returns whether a point is printed.
bool finish_fraction(std::string& fraction, const float_style& style) {
  if (style.trim == trim_mode::keep && style.precision > static_cast<int>(fraction.size()))
    fraction.append(static_cast<std::size_t>(style.precision) - fraction.size(), '0');
  if (style.min_digits > static_cast<int>(fraction.size()))  // only zero is left short here
    fraction.append(static_cast<std::size_t>(style.min_digits) - fraction.size(), '0');
  if (style.precision >= 0 && style.trim != trim_mode::keep)
    while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  if (fraction.empty()) {
    if (style.trim == trim_mode::leave_one_zero) fraction = "0";
    if (style.trim == trim_mode::dot_and_zeros) return false;
  }
  return true;
}

void pad_left(std::string& s, int width) {
  if (static_cast<int>(s.size()) < width) s.insert(0, static_cast<std::size_t>(width) - s.size(), ' ');
}

} // namespace

decimal_digits shortest_digits(double value, dtype type) {
  decimal_digits d;
  const bool negative = std::signbit(value);
  const double magnitude = std::fabs(value);
  if (magnitude == 0) {
    d.digits = "0";
  } else if (type == dtype::float16) {
    d = shortest_half<5, 10>(magnitude);
  } else if (type == dtype::bfloat16) {
    d = shortest_half<8, 7>(magnitude);
  } else {
    char buf[64];
    constexpr auto sci = std::chars_format::scientific;
    const auto r = type == dtype::float32 ? std::to_chars(buf, buf + sizeof buf - 1, static_cast<float>(magnitude), sci)
                                          : std::to_chars(buf, buf + sizeof buf - 1, magnitude, sci);
    *r.ptr = '\0';
    d = parse_scientific(buf);
  }
  d.negative = negative;
  return d;
}

std::string format_positional(double value, dtype type, const float_style& style) {
  const decimal_digits d = shortest_digits(value, type);
  std::string whole;
  std::string fraction;
  split_positional(d, whole, fraction);
  // Fewer digits than the shortest: round the exact value; more (min_digits): Dragon4 goes on with
  // the exact value's digits, rounded at the last one, as printf does.
  int digits = -1;
  if (style.precision >= 0 && static_cast<int>(fraction.size()) > style.precision) digits = style.precision;
  else if (style.min_digits > static_cast<int>(fraction.size())) digits = style.min_digits;
  if (digits >= 0) {
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.*f", digits, std::fabs(value));
    const std::string text = buf;
    const auto dot = text.find('.');
    whole = text.substr(0, dot);
    fraction = dot == std::string::npos ? "" : text.substr(dot + 1);
  }
  const bool point = finish_fraction(fraction, style);
  std::string s = (d.negative ? "-" : "") + whole;
  pad_left(s, style.pad_left);
  if (point) s += "." + fraction;
  if (style.pad_right >= static_cast<int>(fraction.size())) {
    if (!point) s += ' ';
    s.append(static_cast<std::size_t>(style.pad_right) - fraction.size(), ' ');
  }
  return s;
}

std::string format_scientific(double value, dtype type, const float_style& style) {
  decimal_digits d = shortest_digits(value, type);
  int digits = -1;  // as in format_positional
  const int shortest = static_cast<int>(d.digits.size()) - 1;
  if (style.precision >= 0 && shortest > style.precision) digits = style.precision;
  else if (style.min_digits > shortest) digits = style.min_digits;
  std::string fraction = d.digits.substr(1);
  if (digits >= 0 && d.digits != "0") {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", digits, std::fabs(value));
    const std::string text = buf;  // "d.ddd" "e" "+XX", digits kept as printed
    const auto e = text.find('e');
    const auto dot = text.find('.');
    d.digits = text.substr(0, 1);
    fraction = dot == std::string::npos ? "" : text.substr(dot + 1, e - dot - 1);
    d.exponent = std::atoi(text.c_str() + e + 1);
  }
  const bool point = finish_fraction(fraction, style);
  std::string s = (d.negative ? "-" : "") + d.digits.substr(0, 1);
  pad_left(s, style.pad_left);
  if (point) s += "." + fraction;
  std::string exp = std::to_string(std::abs(d.exponent));
  const int exp_digits = style.exp_digits < 0 ? 2 : std::min(style.exp_digits, 5);
  if (static_cast<int>(exp.size()) < exp_digits) exp.insert(0, static_cast<std::size_t>(exp_digits) - exp.size(), '0');
  return s + "e" + (d.exponent < 0 ? "-" : "+") + exp;
}

} // namespace am::detail
