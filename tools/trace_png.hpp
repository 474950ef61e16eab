/// The timeline picture of `actormesh trace summary --png`: one lane per track, a bar per span
/// (nested spans drawn thinner inside their parent; spans under two pixels wide as a shade of
/// the time they cover), a short tick at the lane's top per instant (a stall's is red and the
/// lane's height), and a time axis with labelled ticks. Written with libpng; a build without libpng refuses (trace_png_available).
#pragma once

#include "tools/trace_summary.hpp"

#include <string>

namespace am::tools {

/// The picture's layout in pixels.
struct timeline_layout {
  int width = 1600;       ///< the whole image, 200..16384
  int lane_height = 18;   ///< per track
  int left_margin = 40;   ///< lane numbers
  int top_margin = 6;
  int axis_height = 22;   ///< ticks and their labels, at the bottom
  /// The image height for `tracks` lanes.
  int height_for(std::size_t tracks) const;
};

/// The most lanes a picture has (its height stays under 32768 pixels); more are refused.
inline constexpr std::size_t max_timeline_lanes = 1500;

/// True when this build can write PNG files (libpng was found at build time).
bool trace_png_available() noexcept;

/// Writes the timeline of `summary` to `path` as an 8-bit RGB PNG of layout.width x
/// layout.height_for(tracks) pixels. Throws am::value_error for a bad layout, too many tracks, an
/// unwritable path, or a build without libpng ("... install libpng-dev and rebuild").
void write_timeline_png(const trace_summary& summary, const std::string& path, const timeline_layout& layout = {});

} // namespace am::tools
