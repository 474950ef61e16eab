/// What the timeline pictures (tools/trace_png.hpp, tools/trace_svg.hpp) share: a colour per span
/// name, and the time axis's ticks.
#pragma once

#include "tools/trace_summary.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace am::tools {

/// An RGB colour.
struct rgb {
  std::uint8_t r, g, b;
};

/// A stable colour per span name (FNV-1a into a palette of ten distinguishable colours), so that
/// one operation has one colour in every picture.
rgb colour_of(const std::string& name);

/// A tick step of 1, 2 or 5 times a power of ten giving about `wanted` ticks over `span_us`.
double tick_step(double span_us, int wanted);

/// A tick's label: "250us", "1.5ms", "2s", by the step's size.
std::string tick_label(double us, double step);

/// For each of `columns` columns over [start_us, start_us + span_us): the share (0..1) of its time
/// that the track's outer spans cover. Spans narrower than a column would fill whole columns and
/// make sparse work look busy; the pictures shade each column by this share instead.
std::vector<double> column_cover(const trace_track_summary& track, double start_us, double span_us, int columns);

/// The most ticks an axis has, whatever the trace's times.
inline constexpr int max_ticks = 1000;

} // namespace am::tools
