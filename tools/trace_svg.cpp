#include "tools/trace_svg.hpp"

#include "tools/timeline_scale.hpp"
#include "tools/trace_png.hpp"

#include "actormesh/actors/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

namespace am::tools {

namespace {

constexpr int lane_height = 18;
constexpr int top_margin = 6;
constexpr int name_width = 300; ///< the lanes' names, left of the plot
constexpr int axis_height = 24;
constexpr int legend_row = 18;

/// `s` with XML's special characters escaped, for text and attribute values.
std::string xml(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t')
        out += ' '; // XML 1.0 has no other control characters
      else
        out += c;
    }
  }
  return out;
}

std::string css(rgb c) { return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b); }

/// A name cut to about `chars` characters, so that it fits the names' column.
std::string fitted(const std::string& name, std::size_t chars) {
  return name.size() <= chars ? name : name.substr(0, chars - 3) + "...";
}

} // namespace

std::string timeline_svg(const trace_summary& s, int width, std::size_t legend_names) {
  if (width < 200 || width > 16384)
    throw value_error("trace: the picture's width must be 200 to 16384 pixels, not " + std::to_string(width));
  if (s.tracks.size() > max_timeline_lanes)
    throw value_error(fmt::format("trace: {} tracks are more than a picture shows ({} at most)", s.tracks.size(),
                                  max_timeline_lanes));
  const int plot_x = name_width, plot_w = width - name_width - 8;
  const int axis_y = top_margin + static_cast<int>(s.tracks.size()) * lane_height;
  const std::size_t legend = std::min(legend_names, s.names.size());
  const int height = axis_y + axis_height + 8 + static_cast<int>((legend + 3) / 4) * legend_row + 8;
  const double span = std::max(s.span.length_us(), 1e-3);
  auto x_of = [&](double ts) { return plot_x + std::clamp((ts - s.span.start_us) / span, -0.001, 1.001) * plot_w; };
  std::string out = fmt::format(
    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
    "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
    width, height);
  const double step = tick_step(span, std::max(2, plot_w / 120));
  for (int k = 0; k <= max_ticks && k * step <= span + 1e-9; ++k)
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e1e1e1\"/>\n",
                       x_of(s.span.start_us + k * step), top_margin, axis_y);
  for (std::size_t i = 0; i < s.tracks.size(); ++i) {
    const auto& t = s.tracks[i];
    const int top = top_margin + static_cast<int>(i) * lane_height;
    if (i % 2 == 1)
      out += fmt::format("<rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f6f6f6\"/>\n", top, width, lane_height);
    out += fmt::format("<text x=\"4\" y=\"{}\"><title>{}</title>{}</text>\n", top + lane_height - 5, xml(t.name),
                       xml(fitted(t.name, 48)));
    const auto covered = column_cover(t, s.span.start_us, span, plot_w);
    for (int col = 0; col < plot_w; ++col)
      if (const double share = covered[static_cast<std::size_t>(col)]; share > 0)
        out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"1\" height=\"{}\" fill=\"#465a78\" fill-opacity=\"{:.2f}\"/>\n",
                           plot_x + col, top + 2, lane_height - 4, std::max(share, 0.15));
    for (auto& b : t.bars) {
      const double x0 = x_of(b.when.start_us), x1 = x_of(b.when.end_us);
      if (x1 - x0 < 2)
        continue;
      const int inset = std::min(2 + 3 * b.depth, lane_height / 2 - 1);
      out += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{} ({})</title></rect>\n",
                         x0, top + inset, x1 - x0, lane_height - 2 * inset, css(colour_of(b.name)), xml(b.name),
                         format_duration(b.when.length_us()));
    }
    for (auto& [ts, name] : t.marks) {
      const bool stall = name == "stall";
      out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{3}\"><title>{4}</title></line>\n",
                         x_of(ts), top + (stall ? 1 : 0), top + (stall ? lane_height - 1 : 2),
                         stall ? "#d62728" : "#282828", xml(name));
    }
  }
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#282828\"/>\n", plot_x, axis_y,
                     plot_x + plot_w, axis_y);
  for (int k = 0; k <= max_ticks && k * step <= span + 1e-9; ++k) {
    const double x = x_of(s.span.start_us + k * step);
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#282828\"/>"
                       "<text x=\"{3:.1f}\" y=\"{4}\">{5}</text>\n",
                       x, axis_y, axis_y + 5, x + 2, axis_y + 17, xml(tick_label(k * step, step)));
  }
  // The legend: the span names with the most time, in their colours, four to a row.
  const int legend_y = axis_y + axis_height + 8;
  const int column = (width - 8) / 4;
  for (std::size_t i = 0; i < legend; ++i) {
    const auto& n = s.names[i];
    const int x = 4 + static_cast<int>(i % 4) * column, y = legend_y + static_cast<int>(i / 4) * legend_row;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">"
                       "<title>{}</title>{} ({})</text>\n",
                       x, y, css(colour_of(n.name)), x + 16, y + 10, xml(n.name), xml(fitted(n.name, 36)),
                       format_duration(n.total_us));
  }
  out += "</svg>\n";
  return out;
}

void write_timeline_svg(const trace_summary& summary, const std::string& path, int width) {
  const auto text = timeline_svg(summary, width);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f)
    throw value_error("trace: cannot write '" + path + "': " + std::strerror(errno));
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  f.close();
  if (!f)
    throw value_error("trace: writing '" + path + "' failed (is the disk full?)");
}

} // namespace am::tools
