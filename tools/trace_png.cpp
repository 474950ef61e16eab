#include "tools/trace_png.hpp"
#include "tools/timeline_scale.hpp"

#include "actormesh/actors/errors.hpp"

#include <fmt/format.h>

#if AM_HAVE_PNG
#include <png.h>
#endif

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace am::tools {

int timeline_layout::height_for(std::size_t tracks) const {
  return top_margin + static_cast<int>(tracks) * lane_height + axis_height;
}

bool trace_png_available() noexcept { return AM_HAVE_PNG != 0; }

namespace {

/// An RGB canvas with clipped drawing.
class canvas {
public:
  canvas(int w, int h) : w_(w), h_(h), pixels_(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 3, 255) {}
  void fill(int x0, int y0, int x1, int y1, rgb c) {
    x0 = std::max(x0, 0), y0 = std::max(y0, 0), x1 = std::min(x1, w_), y1 = std::min(y1, h_);
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) {
        auto* p = &pixels_[(static_cast<std::size_t>(y) * static_cast<std::size_t>(w_) + static_cast<std::size_t>(x)) * 3];
        p[0] = c.r, p[1] = c.g, p[2] = c.b;
      }
  }
  /// Text in a 3x5 pixel font (digits, '.', '-', 'u', 'm', 's'; others are blank), scaled by `scale`.
  void text(int x, int y, const std::string& s, rgb c, int scale = 1) {
    for (char ch : s) {
      auto glyph = glyph_of(ch);
      for (int row = 0; row < 5; ++row)
        for (int col = 0; col < 3; ++col)
          if (glyph[static_cast<std::size_t>(row)] & (4 >> col))
            fill(x + col * scale, y + row * scale, x + (col + 1) * scale, y + (row + 1) * scale, c);
      x += 4 * scale;
    }
  }
  std::uint8_t* row(int y) { return &pixels_[static_cast<std::size_t>(y) * static_cast<std::size_t>(w_) * 3]; }

private:
  static std::array<std::uint8_t, 5> glyph_of(char ch) {
    // Rows top to bottom, 3 bits each (4 = left column).
    switch (ch) {
    case '0': return {7, 5, 5, 5, 7};
    case '1': return {2, 6, 2, 2, 7};
    case '2': return {7, 1, 7, 4, 7};
    case '3': return {7, 1, 7, 1, 7};
    case '4': return {5, 5, 7, 1, 1};
    case '5': return {7, 4, 7, 1, 7};
    case '6': return {7, 4, 7, 5, 7};
    case '7': return {7, 1, 1, 1, 1};
    case '8': return {7, 5, 7, 5, 7};
    case '9': return {7, 5, 7, 1, 7};
    case '.': return {0, 0, 0, 0, 2};
    case '-': return {0, 0, 7, 0, 0};
    case 'u': return {0, 0, 5, 5, 7};
    case 'm': return {0, 0, 7, 7, 5};
    case 's': return {0, 3, 4, 2, 6};
    default: return {0, 0, 0, 0, 0};
    }
  }
  int w_, h_;
  std::vector<std::uint8_t> pixels_;
};

void draw(canvas& c, const trace_summary& s, const timeline_layout& l) {
  int plot_w = l.width - l.left_margin - 4;
  double span = std::max(s.span.length_us(), 1e-3);
  auto x_of = [&](double ts) {
    double x = l.left_margin + std::floor((ts - s.span.start_us) / span * plot_w);
    return static_cast<int>(std::clamp(x, -1.0, static_cast<double>(l.width) + 1)); // no overflow on odd input
  };
  rgb grid{225, 225, 225}, ink{40, 40, 40}, stall{214, 39, 40};
  int axis_y = l.top_margin + static_cast<int>(s.tracks.size()) * l.lane_height;
  double step = tick_step(span, std::max(2, plot_w / 120));
  for (std::size_t i = 1; i < s.tracks.size(); i += 2) { // alternate lanes shaded
    int top = l.top_margin + static_cast<int>(i) * l.lane_height;
    c.fill(l.left_margin, top, l.width, top + l.lane_height, {246, 246, 246});
  }
  for (int k = 0; k <= max_ticks && k * step <= span + 1e-9; ++k) { // grid lines behind the bars
    double at = k * step;
    int x = x_of(s.span.start_us + at);
    c.fill(x, l.top_margin, x + 1, axis_y, grid);
  }
  for (std::size_t i = 0; i < s.tracks.size(); ++i) {
    int top = l.top_margin + static_cast<int>(i) * l.lane_height;
    c.text(4, top + (l.lane_height - 10) / 2, std::to_string(i), ink, 2);
    auto& t = s.tracks[i];
    // Instants first, as short ticks at the lane's top (stalls red, the lane's height), so that the
    // bars drawn over them stay visible where a trace has an instant per call.
    for (auto& [ts, name] : t.marks) {
      int x = x_of(ts);
      if (name == "stall")
        c.fill(x, top + 1, x + 1, top + l.lane_height - 1, stall);
      else
        c.fill(x, top, x + 1, top + 2, ink);
    }
    // Spans narrower than a pixel would fill whole pixels and make sparse work look busy: each
    // column is shaded by the share of its time the track's outer spans cover, and only spans
    // two pixels wide or more are drawn as bars of their own colour over that.
    const auto covered = column_cover(t, s.span.start_us, span, plot_w);
    for (int col = 0; col < plot_w; ++col)
      if (double share = covered[static_cast<std::size_t>(col)]; share > 0) {
        auto blend = [&](int v) { return static_cast<std::uint8_t>(255 - (255 - v) * std::max(share, 0.15)); };
        c.fill(l.left_margin + col, top + 2, l.left_margin + col + 1, top + l.lane_height - 2,
               {blend(70), blend(90), blend(120)});
      }
    for (auto& b : t.bars) {
      int x0 = x_of(b.when.start_us), x1 = x_of(b.when.end_us);
      if (x1 - x0 < 2)
        continue;
      int inset = std::min(2 + 3 * b.depth, l.lane_height / 2 - 1);
      c.fill(x0, top + inset, x1, top + l.lane_height - inset, colour_of(b.name));
    }
  }
  c.fill(l.left_margin, axis_y, l.width - 4, axis_y + 1, ink);
  for (int k = 0; k <= max_ticks && k * step <= span + 1e-9; ++k) {
    double at = k * step;
    int x = x_of(s.span.start_us + at);
    c.fill(x, axis_y, x + 1, axis_y + 5, ink);
    c.text(x + 2, axis_y + 8, tick_label(at, step), ink, 2);
  }
}

#if AM_HAVE_PNG
struct file_closer {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

void save(canvas& c, int width, int height, const std::string& path) {
  std::unique_ptr<std::FILE, file_closer> f(std::fopen(path.c_str(), "wb"));
  if (!f)
    throw value_error("trace: cannot write '" + path + "': " + std::strerror(errno));
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_write_struct(&png, &info);
    throw value_error("trace: cannot start libpng to write '" + path + "'");
  }
  std::vector<png_bytep> rows(static_cast<std::size_t>(height));
  for (int y = 0; y < height; ++y)
    rows[static_cast<std::size_t>(y)] = c.row(y);
  // libpng reports errors by longjmp: nothing with a destructor is created between here and the end.
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw value_error("trace: writing '" + path + "' failed (libpng error; is the disk full?)");
  }
  png_init_io(png, f.get());
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  if (std::fflush(f.get()) != 0)
    throw value_error("trace: writing '" + path + "' failed: " + std::strerror(errno));
}
#endif

} // namespace

void write_timeline_png(const trace_summary& summary, const std::string& path, const timeline_layout& layout) {
#if AM_HAVE_PNG
  if (layout.width < 200 || layout.width > 16384)
    throw value_error("trace: the picture's width must be 200..16384 pixels, not " + std::to_string(layout.width));
  if (layout.lane_height < 4 || layout.lane_height > 200)
    throw value_error("trace: the lane height must be 4..200 pixels, not " + std::to_string(layout.lane_height));
  if (summary.tracks.size() > max_timeline_lanes)
    throw value_error("trace: " + std::to_string(summary.tracks.size()) + " tracks are more than the "
                      + std::to_string(max_timeline_lanes) + " lanes a picture has");
  if (!std::isfinite(summary.span.start_us) || !std::isfinite(summary.span.length_us()))
    throw value_error("trace: the trace's times are out of range; no picture drawn");
  int height = layout.height_for(summary.tracks.size());
  canvas c(layout.width, height);
  draw(c, summary, layout);
  save(c, layout.width, height, path);
#else
  (void)summary;
  (void)layout;
  throw value_error("trace: cannot write '" + path + "': this build has no PNG support (libpng was not found when "
                    "it was configured: install libpng-dev and rebuild)");
#endif
}

} // namespace am::tools
