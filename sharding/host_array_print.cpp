/// Printing host arrays as numpy does: a port of numpy's arrayprint (FloatingFormat, IntegerFormat,
/// BoolFormat, _formatArray, _array_repr_implementation) for numpy 2's default options.
#include "actormesh/sharding/host_array_print.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <ostream>

#include "sharding/detail/numpy_float_format.hpp"

namespace am {

namespace {

using detail::float_style;
using detail::trim_mode;
using formatter = std::function<std::string(std::int64_t flat)>;

double element_double(const host_array& a, std::int64_t flat) {
  return visit_dtype(a.dtype(), [&]<class T>(std::type_identity<T>) {
    return convert_element<double>(a.data<T>()[flat]);
  });
}

std::int64_t element_int(const host_array& a, std::int64_t flat) {
  return visit_dtype(a.dtype(), [&]<class T>(std::type_identity<T>) {
    return convert_element<std::int64_t>(a.data<T>()[flat]);
  });
}

std::string left_pad(std::string s, std::size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// ml_dtypes prints bfloat16 through `std::ostream << float` (printf's %g) and NaN without its sign.
std::string bfloat16_text(double v) {
  if (std::isnan(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The flat indices numpy's _leading_trailing keeps: per dimension the first and last `edge` items when
// the dimension is longer than 2 * edge, else all of them.
std::vector<std::int64_t> summary_indices(const host_array::shape_type& shape, std::int64_t edge, bool summarize) {
  std::vector<std::int64_t> flat{0};
  for (const std::int64_t n : shape) {
    std::vector<std::int64_t> keep;
    for (std::int64_t i = 0; i < n; ++i)
      if (!summarize || n <= 2 * edge || i < edge || i >= n - edge) keep.push_back(i);
    std::vector<std::int64_t> next;
    next.reserve(flat.size() * keep.size());
    for (const std::int64_t f : flat)
      for (const std::int64_t i : keep) next.push_back(f * n + i);
    flat = std::move(next);
  }
  return flat;
}

// numpy's exponent decision, compared in the element type as numpy 2 does (weak Python floats).
bool use_scientific(dtype type, double max_val, double min_val) {
  switch (type) {
    case dtype::float16: {
      const float ratio = static_cast<float>(float16(static_cast<float>(max_val) / static_cast<float>(min_val)));
      return max_val >= 1e3 || min_val < static_cast<double>(float16(1e-4)) || ratio > 1000.0f;
    }
    case dtype::float32:
      return max_val >= 1e6 || min_val < static_cast<double>(1e-4f) ||
             static_cast<float>(max_val) / static_cast<float>(min_val) > 1000.0f;
    default: return max_val >= 1e8 || min_val < 1e-4 || max_val / min_val > 1000.0;
  }
}

// numpy's FloatingFormat (floatmode 'maxprec', sign '-', suppress off) over the sampled values.
formatter float_formatter(const host_array& a, const std::vector<std::int64_t>& sample, int precision) {
  const dtype type = a.dtype();
  std::vector<double> finite;
  bool any_nonfinite = false;
  bool neginf = false;
  for (const std::int64_t f : sample) {
    const double v = element_double(a, f);
    if (std::isfinite(v)) finite.push_back(v);
    else any_nonfinite = true, neginf = neginf || (std::isinf(v) && v < 0);
  }
  bool exp_format = false;
  double max_val = 0;
  double min_val = INFINITY;
  for (const double v : finite)
    if (v != 0) max_val = std::max(max_val, std::fabs(v)), min_val = std::min(min_val, std::fabs(v));
  if (max_val > 0) exp_format = use_scientific(type, max_val, min_val);

  float_style style;
  style.precision = precision;
  int pad_left = 0;
  int pad_right = 0;
  if (!finite.empty() && exp_format) {
    int frac_len = 0;
    int exp_len = 0;
    for (const double v : finite) {
      const std::string s = detail::format_scientific(v, type, {.precision = precision, .trim = trim_mode::zeros});
      const auto e = s.find('e');
      const auto dot = s.find('.');
      pad_left = std::max(pad_left, static_cast<int>(dot));
      frac_len = std::max(frac_len, static_cast<int>(e - dot - 1));
      exp_len = std::max(exp_len, static_cast<int>(s.size() - e - 1));
    }
    style = {.precision = frac_len, .min_digits = frac_len, .trim = trim_mode::keep, .exp_digits = exp_len - 1};
    pad_right = style.exp_digits + 2 + frac_len;
  } else if (!finite.empty()) {
    for (const double v : finite) {
      const std::string s = detail::format_positional(v, type, {.precision = precision, .trim = trim_mode::zeros});
      const auto dot = s.find('.');
      pad_left = std::max(pad_left, static_cast<int>(dot));
      pad_right = std::max(pad_right, static_cast<int>(s.size() - dot - 1));
    }
    style = {.precision = precision, .min_digits = 0, .trim = trim_mode::zeros};
  }
  if (any_nonfinite) pad_left = std::max({pad_left, 3 - (pad_right + 1), 3 + (neginf ? 1 : 0) - (pad_right + 1)});
  style.pad_left = pad_left;
  if (!exp_format) style.pad_right = pad_right;
  const auto width = static_cast<std::size_t>(pad_left + pad_right + 1);
  return [&a, type, style, exp_format, width](std::int64_t flat) {
    const double v = element_double(a, flat);
    if (std::isnan(v)) return left_pad("nan", width);
    if (std::isinf(v)) return left_pad(v < 0 ? "-inf" : "inf", width);
    return exp_format ? detail::format_scientific(v, type, style) : detail::format_positional(v, type, style);
  };
}

formatter make_formatter(const host_array& a, const std::vector<std::int64_t>& sample, const print_options& o) {
  switch (a.dtype()) {
    case dtype::bool_: {
      const std::string true_text = a.ndim() == 0 ? "True" : " True";
      return [&a, true_text](std::int64_t flat) {
        return std::to_integer<int>(a.bytes()[static_cast<std::size_t>(flat)]) != 0 ? true_text : std::string("False");
      };
    }
    case dtype::uint8:
    case dtype::int32:
    case dtype::int64: {
      std::size_t width = 0;
      for (const std::int64_t f : sample) width = std::max(width, std::to_string(element_int(a, f)).size());
      return [&a, width](std::int64_t flat) { return left_pad(std::to_string(element_int(a, flat)), width); };
    }
    case dtype::bfloat16:
      return [&a](std::int64_t flat) { return bfloat16_text(element_double(a, flat)); };
    default: return float_formatter(a, sample, o.precision);
  }
}

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// numpy's _extendLine: wrap before `word` when the line would pass `width`, unless that cannot help.
void extend_line(std::string& s, std::string& line, const std::string& word, std::size_t width,
                 const std::string& next_line_prefix) {
  if (line.size() + word.size() > width && line.size() > next_line_prefix.size()) {
    s += rstrip(line) + "\n";
    line = next_line_prefix;
  }
  line += word;
}

// numpy's _formatArray.
struct layout {
  const host_array& a;
  const formatter& format;
  std::string separator;
  std::int64_t edge;
  bool summarize;

  std::string recurse(std::size_t axis, std::int64_t offset, const std::string& hanging_indent,
                      std::int64_t curr_width) const {
    const host_array::shape_type& shape = a.shape();
    if (axis == shape.size()) return format(offset);
    const std::size_t axes_left = shape.size() - axis;
    const std::string next_hanging_indent = hanging_indent + ' ';
    const std::int64_t next_width = curr_width - 1;
    std::int64_t stride = 1;
    for (std::size_t d = axis + 1; d < shape.size(); ++d) stride *= shape[d];
    const std::int64_t n = shape[axis];
    const bool show_summary = summarize && 2 * edge < n;
    const std::int64_t leading = show_summary ? edge : 0;
    const std::int64_t trailing = show_summary ? edge : n;
    const auto child = [&](std::int64_t i) {
      return recurse(axis + 1, offset + i * stride, next_hanging_indent, next_width);
    };
    std::string s;
    if (axes_left == 1) {
      const auto sep_width = static_cast<std::int64_t>(std::max<std::size_t>(rstrip(separator).size(), 1));
      const auto elem_width = static_cast<std::size_t>(curr_width - sep_width);
      std::string line = hanging_indent;
      for (std::int64_t i = 0; i < leading; ++i) {
        extend_line(s, line, child(i), elem_width, hanging_indent);
        line += separator;
      }
      if (show_summary) {
        extend_line(s, line, "...", elem_width, hanging_indent);
        line += separator;
      }
      for (std::int64_t i = trailing; i > 1; --i) {
        extend_line(s, line, child(n - i), elem_width, hanging_indent);
        line += separator;
      }
      extend_line(s, line, child(n - 1), elem_width, hanging_indent);
      s += line;
    } else {
      const std::string line_sep = rstrip(separator) + std::string(axes_left - 1, '\n');
      for (std::int64_t i = 0; i < leading; ++i) s += hanging_indent + child(i) + line_sep;
      if (show_summary) s += hanging_indent + "..." + line_sep;
      for (std::int64_t i = trailing; i > 1; --i) s += hanging_indent + child(n - i) + line_sep;
      s += hanging_indent + child(n - 1);
    }
    return "[" + s.substr(hanging_indent.size()) + "]";
  }
};

// numpy's array2string body for a non-empty array.
std::string array_text(const host_array& a, const print_options& o, const std::string& separator,
                       std::size_t prefix_len, std::int64_t linewidth) {
  const bool summarize = a.size() > o.threshold;
  const formatter format = make_formatter(a, summary_indices(a.shape(), o.edgeitems, summarize), o);
  const layout l{a, format, separator, o.edgeitems, summarize};
  return l.recurse(0, 0, std::string(prefix_len + 1, ' '), linewidth);
}

// numpy's str of a scalar: positional when 0 or 1e-4 <= |x| < cutoff (1e3 float16, 1e6 float32,
// 1e16 float64) with one zero kept after the point, else scientific without a bare point.
std::string scalar_text(const host_array& a) {
  switch (a.dtype()) {
    case dtype::bool_: return std::to_integer<int>(a.bytes()[0]) != 0 ? "True" : "False";
    case dtype::uint8:
    case dtype::int32:
    case dtype::int64: return std::to_string(element_int(a, 0));
    case dtype::bfloat16: return bfloat16_text(element_double(a, 0));
    default: break;
  }
  const double v = element_double(a, 0);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  const double cutoff = a.dtype() == dtype::float16 ? 1e3 : a.dtype() == dtype::float32 ? 1e6 : 1e16;
  const double m = std::fabs(v);
  if (m == 0 || (m >= 1e-4 && m < cutoff))
    return detail::format_positional(v, a.dtype(), {.trim = trim_mode::leave_one_zero});
  return detail::format_scientific(v, a.dtype(), {.trim = trim_mode::dot_and_zeros});
}

} // namespace

std::string to_string(const host_array& a, const print_options& options) {
  if (a.ndim() == 0) return scalar_text(a);
  if (a.size() == 0) return "[]";
  return array_text(a, options, " ", 0, options.linewidth);
}

std::string repr(const host_array& a, const print_options& options) {
  const std::string prefix = "array(";
  const std::string body = a.size() == 0 ? "[]" : array_text(a, options, ", ", prefix.size(), options.linewidth - 1);
  std::vector<std::string> extras;
  const bool one_d_empty = a.size() == 0 && a.ndim() == 1;
  if ((a.size() == 0 && !one_d_empty) || a.size() > options.threshold)
    extras.push_back("shape=" + shape_to_string(a.shape()));
  const dtype t = a.dtype();
  if ((t != dtype::float64 && t != dtype::int64 && t != dtype::bool_) || a.size() == 0)
    extras.push_back("dtype=" + std::string(name(t)));
  if (extras.empty()) return prefix + body + ")";
  const std::string arr_str = prefix + body + ",";
  std::string extra_str;
  for (std::size_t i = 0; i < extras.size(); ++i) extra_str += (i > 0 ? ", " : "") + extras[i];
  extra_str += ")";
  const std::size_t newline = arr_str.rfind('\n');
  const std::size_t last_line_len = newline == std::string::npos ? arr_str.size() : arr_str.size() - newline - 1;
  const std::string spacer = static_cast<std::int64_t>(last_line_len + extra_str.size() + 1) > options.linewidth
                                 ? "\n" + std::string(prefix.size(), ' ')
                                 : " ";
  return arr_str + spacer + extra_str;
}

std::ostream& operator<<(std::ostream& os, const host_array& a) { return os << to_string(a); }

} // namespace am
