#include "actormesh/sharding/visualize.hpp"

#include "actormesh/actors/errors.hpp"
#include "sharding/detail/py_format.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <string_view>
#include <utility>

namespace am {

namespace {

using detail::py_floordiv;
using detail::py_mod;

// One table cell as JAX builds it: a label inside a rich Padding(top, right, bottom, left).
struct cell {
  std::string label;
  std::int64_t top = 0, right = 0, bottom = 0, left = 0;

  std::int64_t natural_width() const { return left + static_cast<std::int64_t>(label.size()) + right; }

  // rich's Padding.__rich_measure__ maximum at `width` available.
  std::int64_t measure(std::int64_t width) const {
    if (width - (left + right) < 1)
      return width;
    return std::min(natural_width(), width);
  }
};

// rich's ratio_reduce: take `total` away from `values` in proportion to `ratios`, at most
// `maximums[i]` from slot i.
std::vector<std::int64_t> ratio_reduce(std::int64_t total, std::vector<std::int64_t> ratios,
                                       const std::vector<std::int64_t>& maximums,
                                       const std::vector<std::int64_t>& values) {
  for (std::size_t i = 0; i < ratios.size(); ++i)
    if (maximums[i] == 0)
      ratios[i] = 0;
  std::int64_t total_ratio = std::accumulate(ratios.begin(), ratios.end(), std::int64_t{0});
  if (total_ratio == 0)
    return values;
  std::int64_t remaining = total;
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (ratios[i] != 0 && total_ratio > 0) {
      const auto share = detail::py_round(static_cast<double>(ratios[i] * remaining) / static_cast<double>(total_ratio));
      const auto distributed = std::min(maximums[i], share);
      out.push_back(values[i] - distributed);
      remaining -= distributed;
      total_ratio -= ratios[i];
    } else {
      out.push_back(values[i]);
    }
  }
  return out;
}

std::int64_t sum(const std::vector<std::int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::int64_t{0});
}

// rich's Table._collapse_widths (every column may wrap) followed by its last resort, an even cut.
std::vector<std::int64_t> fit_widths(std::vector<std::int64_t> widths, std::int64_t max_width) {
  std::int64_t total = sum(widths);
  std::int64_t excess = total - max_width;
  while (total != 0 && excess > 0) {
    const auto max_column = *std::max_element(widths.begin(), widths.end());
    std::int64_t second = 0;
    for (auto w : widths)
      if (w != max_column)
        second = std::max(second, w);
    const auto difference = max_column - second;
    if (difference == 0)
      break;
    std::vector<std::int64_t> ratios;
    for (auto w : widths)
      ratios.push_back(w == max_column ? 1 : 0);
    const std::vector<std::int64_t> max_reduce(widths.size(), std::min(excess, difference));
    widths = ratio_reduce(excess, ratios, max_reduce, widths);
    total = sum(widths);
    excess = total - max_width;
  }
  if (sum(widths) > max_width)
    widths = ratio_reduce(sum(widths) - max_width, std::vector<std::int64_t>(widths.size(), 1), widths, widths);
  return widths;
}

// Greedy word wrap of `label` into lines of at most `width` characters; longer words are folded.
std::vector<std::string> wrap_label(const std::string& label, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t at = 0;
  while (at < label.size()) {
    auto end = label.find(' ', at);
    if (end == std::string::npos)
      end = label.size();
    std::string word = label.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.size() + 1 + word.size() <= width) {
      line += " " + word;
      continue;
    }
    if (!line.empty())
      lines.push_back(std::move(line));
    line.clear();
    while (word.size() > width) {
      lines.push_back(word.substr(0, width));
      word.erase(0, width);
    }
    line = std::move(word);
  }
  if (!line.empty() || lines.empty())
    lines.push_back(std::move(line));
  return lines;
}

// One line of a cell as rich writes it: the runs of text that share its style (padding, label).
using cell_line = std::vector<std::string>;

// The lines of one cell drawn `width` wide.
std::vector<cell_line> render_cell(const cell& c, std::int64_t width) {
  const auto w = static_cast<std::size_t>(std::max<std::int64_t>(width, 0));
  std::vector<cell_line> lines(static_cast<std::size_t>(c.top), cell_line{std::string(w, ' ')});
  if (c.natural_width() <= width) {
    // rich: left padding, the label, right padding, then blanks up to the column width.
    cell_line line;
    if (c.left > 0)
      line.push_back(std::string(static_cast<std::size_t>(c.left), ' '));
    line.push_back(c.label);
    const auto rest = w - static_cast<std::size_t>(c.left) - c.label.size();
    if (rest > 0)
      line.push_back(std::string(rest, ' '));
    lines.push_back(std::move(line));
  } else {
    // Overflow (JAX loses the label here): wrap the label at its blank, fold words that are still
    // too long, and centre each line.
    for (const auto& part : wrap_label(c.label, std::max<std::size_t>(w, 1))) {
      const std::size_t free = w > part.size() ? w - part.size() : 0;
      std::string line = std::string(free / 2, ' ') + part;
      line.resize(std::max(w, line.size()), ' ');
      lines.push_back(cell_line{std::move(line)});
    }
  }
  lines.insert(lines.end(), static_cast<std::size_t>(c.bottom), cell_line{std::string(w, ' ')});
  return lines;
}

// A cell's colours in JAX's coloured picture: the background and black or white text, whichever
// reads better on it (JAX's luminance test).
struct cell_colour {
  int red = 0, green = 0, blue = 0;
  bool black_text = false;
};

// matplotlib's "tab20b" colour map, JAX's default: 20 colours, a value in [0, 1] picks entry
// min(int(value * 20), 19).
constexpr std::uint32_t tab20b[20] = {0x393b79, 0x5254a3, 0x6b6ecf, 0x9c9ede, 0x637939, 0x8ca252, 0xb5cf6b,
                                      0xcedb9c, 0x8c6d31, 0xbd9e39, 0xe7ba52, 0xe7cb94, 0x843c39, 0xad494a,
                                      0xd6616b, 0xe7969c, 0x7b4173, 0xa55194, 0xce6dbd, 0xde9ed6};

// The colours of `count` cells in row-major order, as JAX's make_color_iter hands them out: the
// values 0..1 evenly spaced, taken in strides of about half the count so that neighbours differ.
std::vector<cell_colour> cell_colours(std::int64_t count) {
  std::vector<cell_colour> out;
  const double step = count > 1 ? 1.0 / static_cast<double>(count - 1) : 0.0; // numpy's linspace
  std::int64_t idx = 0;
  for (std::int64_t k = 0; k < count; ++k) {
    const double value = count > 1 && idx == count - 1 ? 1.0 : static_cast<double>(idx) * step;
    const auto entry = std::min<std::int64_t>(static_cast<std::int64_t>(value * 20.0), 19);
    const auto rgb = tab20b[entry];
    cell_colour c{static_cast<int>(rgb >> 16), static_cast<int>((rgb >> 8) & 0xff), static_cast<int>(rgb & 0xff), false};
    c.black_text = c.red * 0.299 + c.green * 0.587 + c.blue * 0.114 > 186;
    out.push_back(c);
    idx = (idx + count / 2 + (count % 2 == 0 ? 1 : 0)) % count;
  }
  return out;
}

// `text` in the colours `c`, as rich writes a styled run on a truecolor terminal.
std::string coloured(const std::string& text, const cell_colour& c) {
  const int ink = c.black_text ? 0 : 255;
  return "\x1b[38;2;" + std::to_string(ink) + ";" + std::to_string(ink) + ";" + std::to_string(ink) + ";48;2;"
         + std::to_string(c.red) + ";" + std::to_string(c.green) + ";" + std::to_string(c.blue) + "m" + text
         + "\x1b[0m";
}

std::string rule(const std::vector<std::int64_t>& widths, const char* left, const char* middle,
                 const char* right) {
  std::string out = left;
  for (std::size_t j = 0; j < widths.size(); ++j) {
    if (j > 0)
      out += middle;
    for (std::int64_t k = 0; k < widths[j]; ++k)
      out += "─";
  }
  return out + right + "\n";
}

} // namespace

std::string visualize_sharding(const std::vector<std::int64_t>& shape, const sharding& s,
                               const visualize_options& options) {
  if (shape.size() < 1 || shape.size() > 2)
    throw value_error("`visualize_sharding` only works for shapes with 1 and 2 dimensions.");
  for (auto d : shape)
    if (d <= 0)
      throw value_error("`visualize_sharding` needs every dimension to be at least 1, got shape " +
                        detail::py_int_tuple(shape));
  const bool two_d = shape.size() == 2;
  const auto base_height = static_cast<std::int64_t>(10 * options.scale);
  const double aspect_ratio = static_cast<double>(two_d ? shape[1] : 1) / static_cast<double>(shape[0]);
  const auto base_width = static_cast<std::int64_t>(static_cast<double>(base_height) * aspect_ratio);
  const double height_to_width_ratio = 2.5;

  const auto placements = s.devices_indices_map(shape);
  std::string kind = options.platform;
  if (kind.empty())
    kind = placements.front().first.platform == platform::cuda ? "GPU" : "CPU";

  // Blocks by chunk coordinates (row, column): the devices holding each, and its share of the array.
  std::map<std::pair<std::int64_t, std::int64_t>, std::set<int>> ids;
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<double, double>> extent; // height, width
  for (const auto& [dev, index] : placements) {
    std::pair<std::int64_t, std::int64_t> key;
    if (two_d) {
      key = {index[0].start / index[0].size(), index[1].start / index[1].size()};
      extent[key] = {static_cast<double>(index[0].size()) / static_cast<double>(shape[0]),
                     static_cast<double>(index[1].size()) / static_cast<double>(shape[1])};
    } else {
      key = {0, index[0].start / index[0].size()};
      extent[key] = {-1.0, static_cast<double>(index[0].size()) / static_cast<double>(shape[0])};
    }
    const bool mapped = dev.id >= 0 && static_cast<std::size_t>(dev.id) < options.device_ids.size();
    ids[key].insert(mapped ? options.device_ids[static_cast<std::size_t>(dev.id)] : dev.id);
  }
  if (static_cast<std::int64_t>(ids.size()) > options.max_blocks)
    throw value_error("`visualize_sharding` draws at most " + std::to_string(options.max_blocks) + " blocks, but "
                      + s.to_string() + " splits shape " + detail::py_int_tuple(shape) + " into "
                      + std::to_string(ids.size()));
  std::int64_t rows = 0, cols = 0;
  for (const auto& [key, unused] : ids) {
    rows = std::max(rows, key.first + 1);
    cols = std::max(cols, key.second + 1);
  }

  std::vector<std::vector<cell>> table(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const auto it = ids.find({i, j});
      if (it == ids.end())
        throw value_error("visualize_sharding: the sharding " + s.to_string() + " leaves block (" +
                          std::to_string(i) + ", " + std::to_string(j) + ") of shape " +
                          detail::py_int_tuple(shape) + " on no device");
      cell c;
      c.label = kind + " ";
      bool first = true;
      for (int id : it->second) {
        c.label += (first ? "" : ",") + std::to_string(id);
        first = false;
      }
      const auto [frac_h, frac_w] = extent[{i, j}];
      auto width = static_cast<std::int64_t>(frac_w * static_cast<double>(base_width) * height_to_width_ratio);
      const auto height = frac_h < 0 ? std::int64_t{1} : static_cast<std::int64_t>(frac_h * static_cast<double>(base_height));
      width = std::min<std::int64_t>(std::max<std::int64_t>(width, options.min_width), options.max_width);
      const auto label_len = static_cast<std::int64_t>(c.label.size());
      // Coloured, JAX adds one to every padding (the background shows around the label).
      const std::int64_t extra = options.use_color ? 1 : 0;
      const auto left = py_floordiv(width - label_len - 2, 2) + extra;
      const auto right = left + py_mod(width - label_len - 2, 2);
      const auto top = py_floordiv(height - 2, 2) + extra;
      const auto bottom = top + py_mod(height - 2, 2);
      c.top = std::max<std::int64_t>(top, 0);
      c.right = std::max<std::int64_t>(right, 0);
      c.bottom = std::max<std::int64_t>(bottom, 0);
      c.left = std::max<std::int64_t>(left, 0);
      table[static_cast<std::size_t>(i)].push_back(std::move(c));
    }

  // Column widths the way rich's Table computes them inside a console `max_width` wide (the
  // coloured table has no borders).
  const auto available = static_cast<std::int64_t>(options.max_width) - (options.use_color ? 0 : cols + 1);
  auto column_width = [&](std::int64_t j, std::int64_t width) -> std::int64_t {
    if (width < 1)
      return 0;
    std::int64_t widest = 0;
    for (const auto& row : table)
      widest = std::max(widest, row[static_cast<std::size_t>(j)].measure(width));
    return std::min(widest, width);
  };
  std::vector<std::int64_t> widths;
  for (std::int64_t j = 0; j < cols; ++j)
    widths.push_back(std::max<std::int64_t>(column_width(j, available), 1));
  if (sum(widths) > available) {
    widths = fit_widths(widths, available);
    for (std::int64_t j = 0; j < cols; ++j)
      widths[static_cast<std::size_t>(j)] = column_width(j, widths[static_cast<std::size_t>(j)]);
  }

  const auto colours = options.use_color ? cell_colours(rows * cols) : std::vector<cell_colour>{};
  const char* border = options.use_color ? "" : "│";
  std::string out = options.use_color ? "" : rule(widths, "┌", "┬", "┐");
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (i > 0 && !options.use_color)
      out += rule(widths, "├", "┼", "┤");
    std::vector<std::vector<cell_line>> lines;
    std::size_t height = 0;
    for (std::size_t j = 0; j < table[i].size(); ++j) {
      lines.push_back(render_cell(table[i][j], widths[j]));
      height = std::max(height, lines.back().size());
    }
    for (std::size_t k = 0; k < height; ++k) {
      out += border;
      for (std::size_t j = 0; j < lines.size(); ++j) {
        if (j > 0)
          out += border;
        const cell_line blank{std::string(static_cast<std::size_t>(std::max<std::int64_t>(widths[j], 0)), ' ')};
        for (const auto& run : k < lines[j].size() ? lines[j][k] : blank)
          out += options.use_color ? coloured(run, colours[i * table[i].size() + j]) : run;
      }
      out += border;
      out += "\n";
    }
  }
  if (!options.use_color)
    out += rule(widths, "└", "┴", "┘");
  if (options.trailing_empty_line)
    out += "\n";
  return out;
}

bool stdout_has_colour() {
  const char* term = std::getenv("TERM");
  return ::isatty(STDOUT_FILENO) == 1 && term != nullptr && std::string_view(term) != "dumb" && term[0] != '\0'
         && std::getenv("NO_COLOR") == nullptr;
}

std::string visualize_array_sharding(const std::vector<std::int64_t>& shape, const sharding& s,
                                     const visualize_options& options) {
  return visualize_sharding(shape, s, options);
}

} // namespace am
