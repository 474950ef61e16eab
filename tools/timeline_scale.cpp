#include "tools/timeline_scale.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace am::tools {

rgb colour_of(const std::string& name) {
  static constexpr std::array<rgb, 10> palette{{{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {148, 103, 189},
                                                {140, 86, 75}, {227, 119, 194}, {127, 127, 127}, {188, 189, 34},
                                                {23, 190, 207}, {57, 59, 121}}};
  std::uint32_t h = 2166136261u;
  for (unsigned char c : name)
    h = (h ^ c) * 16777619u;
  return palette[h % palette.size()];
}

double tick_step(double span_us, int wanted) {
  double raw = span_us / std::max(wanted, 1);
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw)
      return m * power;
  return 10 * power;
}

std::vector<double> column_cover(const trace_track_summary& track, double start_us, double span_us, int columns) {
  std::vector<double> covered(static_cast<std::size_t>(std::max(columns, 0)), 0.0);
  const double us_per_column = span_us / std::max(columns, 1);
  for (auto& b : track.bars) {
    if (b.depth != 0)
      continue;
    const double from = (b.when.start_us - start_us) / us_per_column, to = (b.when.end_us - start_us) / us_per_column;
    for (double col = std::max(0.0, std::floor(from)); col < to && col < columns; col += 1) {
      auto& share = covered[static_cast<std::size_t>(col)];
      share = std::min(1.0, share + std::min(to, col + 1) - std::max(from, col));
    }
  }
  return covered;
}

std::string tick_label(double us, double step) {
  if (step >= 1e5)
    return fmt::format("{:g}s", us / 1e6);
  if (step >= 100)
    return fmt::format("{:g}ms", us / 1e3);
  return fmt::format("{:g}us", us);
}

} // namespace am::tools
