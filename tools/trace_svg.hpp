/// The timeline picture of `actormesh trace summary --svg`: what the PNG shows (a lane per track,
/// a bar per span, shading for spans too narrow to draw, instants, a time axis), with each lane
/// named by its track, a legend of the span names by their colour, and each bar's name and length
/// as its tooltip. SVG is text, so any browser draws it with its own fonts; no library is needed.
#pragma once

#include "tools/trace_summary.hpp"

#include <string>

namespace am::tools {

/// The SVG text of the timeline of `summary`, `width` pixels wide (200..16384), listing at most
/// `legend_names` span names in its legend. Throws am::value_error for a bad width or more than
/// max_timeline_lanes tracks.
std::string timeline_svg(const trace_summary& summary, int width = 1600, std::size_t legend_names = 20);

/// Writes timeline_svg(summary, width) to `path`; am::value_error naming the file when it cannot.
void write_timeline_svg(const trace_summary& summary, const std::string& path, int width = 1600);

} // namespace am::tools
