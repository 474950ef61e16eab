// `actormesh trace summary PATH [--top N] [--png OUT.png] [--svg OUT.svg] [--width PIXELS]`:
// per-track busy time, idle gaps and the longest stalls of a Chrome trace file, and its timeline
// as a PNG or an SVG.
// `actormesh trace merge OUT IN...`: several trace files as one.
#include "tools/commands.hpp"
#include "tools/launch_trace.hpp"
#include "tools/trace_png.hpp"
#include "tools/trace_summary.hpp"
#include "tools/trace_svg.hpp"

#include "actormesh/actors/errors.hpp"

#include <fmt/ostream.h>

#include <memory>
#include <string>
#include <vector>

namespace am::tools {

namespace {

struct trace_merge_args {
  std::string output;
  std::vector<std::string> inputs;
};

struct trace_summary_args {
  std::string path;
  std::string png;
  std::string svg;
  std::size_t top = 5;
  std::size_t names = 15;
  int width = 1600;
};

} // namespace

void add_trace_command(CLI::App& app, std::ostream& out) {
  auto* trace = app.add_subcommand("trace", "Look at a trace file (AM_TRACE, doc/observability.md)");
  trace->require_subcommand(1);
  auto args = std::make_shared<trace_summary_args>();
  auto* summary = trace->add_subcommand("summary", "Per-track busy time, idle gaps and the longest stalls of a trace");
  summary->add_option("path", args->path, "A Chrome trace event JSON file (or .json.gz), ours or PyTorch's")
    ->required();
  summary->add_option("--top", args->top, "How many of the longest gaps and stalls to list (default 5)")
    ->check(CLI::Range(std::size_t{0}, std::size_t{1000}));
  summary->add_option("--names", args->names, "How many span names the per-name table lists (default 15)")
    ->check(CLI::Range(std::size_t{0}, std::size_t{100000}));
  summary->add_option("--png", args->png,
                      trace_png_available() ? "Also draw the timeline into this PNG file"
                                            : "Also draw the timeline into this PNG file (not in this build: no libpng)");
  summary->add_option("--svg", args->svg,
                      "Also draw the timeline into this SVG file, with the tracks' names and a legend of span names");
  summary->add_option("--width", args->width, "The picture's width in pixels (default 1600)")
    ->check(CLI::Range(200, 16384));
  summary->callback([args, &out] {
    auto s = summarize_trace_file(args->path);
    print_trace_summary(out, s, args->top, args->names);
    if (!args->png.empty()) {
      timeline_layout layout;
      layout.width = args->width;
      write_timeline_png(s, args->png, layout);
      fmt::print(out, "timeline: {} ({}x{} pixels, lane i is track i above)\n", args->png, layout.width,
                 layout.height_for(s.tracks.size()));
    }
    if (!args->svg.empty()) {
      write_timeline_svg(s, args->svg, args->width);
      fmt::print(out, "timeline: {} (SVG, {} pixels wide, lanes named, with a legend)\n", args->svg, args->width);
    }
  });
  auto merge_args = std::make_shared<trace_merge_args>();
  auto* merge = trace->add_subcommand(
    "merge", "Merge trace files into one (each keeps its processes; a pid already taken gets the next free one)");
  merge->add_option("output", merge_args->output, "The merged trace file to write")->required();
  merge->add_option("inputs", merge_args->inputs, "The trace files to merge (Chrome trace event JSON)")
    ->required()
    ->expected(1, -1)
    ->check(CLI::ExistingFile);
  merge->callback([merge_args, &out] {
    for (auto& input : merge_args->inputs)
      if (input == merge_args->output)
        throw am::value_error("trace merge: the output " + input + " is also an input (it would be written over)");
    auto why = merge_trace_files(merge_args->inputs, merge_args->output, after_merge::keep_inputs, out);
    if (!why.empty())
      throw am::value_error("trace merge: " + why);
    fmt::print(out, "trace merge: {} from {} file{}\n", merge_args->output, merge_args->inputs.size(),
               merge_args->inputs.size() == 1 ? "" : "s");
  });
}

} // namespace am::tools
