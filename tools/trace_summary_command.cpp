// `actormesh trace summary PATH [--top N] [--png OUT.png] [--width PIXELS]`: per-track busy time,
// idle gaps and the longest stalls of a Chrome trace file, and its timeline as a PNG.
#include "tools/commands.hpp"
#include "tools/trace_png.hpp"
#include "tools/trace_summary.hpp"

#include <fmt/ostream.h>

#include <memory>

namespace am::tools {

namespace {

struct trace_summary_args {
  std::string path;
  std::string png;
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
  });
}

} // namespace am::tools
