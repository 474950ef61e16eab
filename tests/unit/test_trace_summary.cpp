// `actormesh trace summary` (tools/trace_summary.hpp, tools/trace_png.hpp): exact busy time, idle
// gaps and stalls of a hand-made trace, the spans by name, PyTorch's exports, .json.gz; the PNG read back with libpng; the command line; and
// garbage input (every truncation, random corruptions) refused with am::value_error, never a crash.
#include "actormesh/actors/errors.hpp"
#include "tools/commands.hpp"
#include "tools/trace_png.hpp"
#include "tools/trace_summary.hpp"
#include "tools/trace_svg.hpp"

#include <catch2/catch.hpp>

#if AM_HAVE_PNG
#include <png.h>
#endif

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace {

/// pid 0: "process 0", tracks TFRT_CPU_0 (tid 1) and a host lane (tid 2); pid 1 without names.
/// Track (0, 1): spans [100, 150) with [120, 130) nested, [200, 230), [400, 500): busy 180 us over
/// [100, 500), gaps [150, 200) and [230, 400); caller 3 stalls 160..190, caller 4 from 240 to the end.
/// Track (0, 2): one B/E pair [0, 1000). Track (1, 5): [50, 75).
const char* hand_made_trace = R"({"traceEvents": [
 {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "process 0"}},
 {"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": "TFRT_CPU_0"}},
 {"ph": "M", "name": "thread_name", "pid": 0, "tid": 2, "args": {"name": "host lane"}},
 {"ph": "X", "name": "a", "pid": 0, "tid": 1, "ts": 100, "dur": 50, "args": {"shapes": "f32[4]"}},
 {"ph": "X", "name": "b", "pid": 0, "tid": 1, "ts": 120.0, "dur": 10},
 {"ph": "X", "name": "d", "pid": 0, "tid": 1, "ts": 400, "dur": 100},
 {"ph": "X", "name": "c", "pid": 0, "tid": 1, "ts": 200, "dur": 30},
 {"ph": "i", "name": "stall", "pid": 0, "tid": 1, "ts": 160, "s": "t", "args": {"caller": 3}},
 {"ph": "i", "name": "resume", "pid": 0, "tid": 1, "ts": 190, "s": "t", "args": {"caller": 3}},
 {"ph": "i", "name": "stall", "pid": 0, "tid": 1, "ts": 240, "s": "t", "args": {"caller": 4}},
 {"ph": "B", "name": "outer", "pid": 0, "tid": 2, "ts": 0},
 {"ph": "E", "pid": 0, "tid": 2, "ts": 1000},
 {"ph": "X", "name": "x", "pid": 1, "tid": 5, "ts": 50, "dur": 25}
], "displayTimeUnit": "ms"})";

std::filesystem::path scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path()
             / ("am_trace_summary_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

int run(std::vector<std::string> args, std::string& out, std::string& err) {
  std::vector<const char*> argv{"actormesh"};
  for (auto& a : args)
    argv.push_back(a.c_str());
  std::ostringstream o, e;
  int status = am::tools::run_cli(static_cast<int>(argv.size()), argv.data(), o, e);
  out = o.str();
  err = e.str();
  return status;
}

} // namespace

TEST_CASE("trace summary: exact busy time, idle gaps and stalls of a hand-made trace", "[trace_summary]") {
  auto s = am::tools::summarize_trace(hand_made_trace);
  CHECK(s.events == 10);
  CHECK(s.span.start_us == 0);
  CHECK(s.span.end_us == 1000);
  REQUIRE(s.tracks.size() == 3);
  auto& cpu = s.tracks[0];
  CHECK(cpu.name == "process 0 / TFRT_CPU_0");
  CHECK(cpu.spans == 4);
  CHECK(cpu.instants == 3);
  CHECK(cpu.active.start_us == 100);
  CHECK(cpu.active.end_us == 500);
  CHECK(cpu.busy_us == 180);
  CHECK(cpu.idle_us == 220);
  REQUIRE(cpu.idle_gaps.size() == 2);
  CHECK(cpu.idle_gaps[0].start_us == 150);
  CHECK(cpu.idle_gaps[0].end_us == 200);
  CHECK(cpu.idle_gaps[1].start_us == 230);
  CHECK(cpu.idle_gaps[1].end_us == 400);
  REQUIRE(cpu.bars.size() == 4);
  CHECK(cpu.bars[1].name == "b");
  CHECK(cpu.bars[1].depth == 1);
  CHECK(cpu.bars[2].depth == 0);
  REQUIRE(cpu.stalls.size() == 2);
  CHECK(cpu.stalls[0].caller == 3);
  CHECK(cpu.stalls[0].when.length_us() == 30);
  CHECK(cpu.stalls[0].resumed);
  CHECK(cpu.stalls[1].caller == 4);
  CHECK(cpu.stalls[1].when.end_us == 1000);
  CHECK_FALSE(cpu.stalls[1].resumed);
  auto& lane = s.tracks[1];
  CHECK(lane.name == "process 0 / host lane");
  CHECK(lane.busy_us == 1000);
  CHECK(lane.idle_gaps.empty());
  auto& other = s.tracks[2];
  CHECK(other.name == "pid 1 / tid 5");
  CHECK(other.busy_us == 25);

  std::ostringstream text;
  am::tools::print_trace_summary(text, s, 3);
  auto printed = text.str();
  CHECK_THAT(printed, Catch::Contains("10 events on 3 tracks over 1.000 ms"));
  CHECK_THAT(printed, Catch::Contains("180.000 us"));
  CHECK_THAT(printed, Catch::Contains("18.0%"));
  CHECK_THAT(printed, Catch::Contains("170.000 us  lane 0    process 0 / TFRT_CPU_0 at +230.000 us"));
  CHECK_THAT(printed, Catch::Contains("760.000 us  lane 0    process 0 / TFRT_CPU_0 caller 4 at +240.000 us (no resume"));
  CHECK_THAT(printed, Catch::Contains("30.000 us  lane 0    process 0 / TFRT_CPU_0 caller 3 at +160.000 us"));
}

TEST_CASE("trace summary: a bare array of events and quoted ids are read too", "[trace_summary]") {
  auto s = am::tools::summarize_trace(R"([{"ph":"X","name":"p","pid":"2","tid":"7","ts":5,"dur":5}])");
  REQUIRE(s.tracks.size() == 1);
  CHECK(s.tracks[0].pid == 2);
  CHECK(s.tracks[0].tid == 7);
  CHECK(s.tracks[0].busy_us == 5);
  CHECK(am::tools::summarize_trace(R"({"traceEvents": []})").tracks.empty());
}

TEST_CASE("trace summary: bad traces are refused with a clear error", "[trace_summary]") {
  using am::tools::summarize_trace;
  auto refused = [](const char* text, const char* why) {
    INFO(text);
    CHECK_THROWS_WITH(summarize_trace(text), Catch::Contains(why));
  };
  refused("", "trace: not valid JSON");
  refused(R"({"traceEvents": [)", "trace: not valid JSON");
  refused(R"({"events": []})", "expected {\"traceEvents\": [...]}");
  refused(R"([1])", "event 0 is not an object");
  refused(R"([{"ts": 1}])", "event 0 has no \"ph\"");
  refused(R"([{"ph": "X", "dur": 1}])", "event 0 has no \"ts\"");
  refused(R"([{"ph": "X", "ts": "soon"}])", "\"ts\" must be a number");
  refused(R"([{"ph": "X", "ts": 1, "dur": -1}])", "negative duration");
  refused(R"([{"ph": "X", "ts": 1e308, "dur": 1e308}])", "ends past the largest time");
  refused(R"([{"ph": "E", "ts": 1}])", "an \"E\" event with no \"B\"");
  refused(R"([{"ph": "X", "ts": 1, "pid": 1.5}])", "\"pid\" must be an integer");
  refused(R"([{"ph": 7, "ts": 1}])", "\"ph\" must be a string");
  std::string deep(100000, '[');
  CHECK_THROWS_AS(summarize_trace(deep), am::value_error);
  CHECK_THROWS_WITH(summarize_trace(std::string(100, '[') + std::string(100, ']')), Catch::Contains("nested deeper than 64"));
  refused(R"({"traceEvents": {"a": 1}})", "expected {\"traceEvents\": [...]}");
  refused(R"({"traceEvents": 5})", "expected {\"traceEvents\": [...]}");
  refused(R"({"traceEvents": [[1]]})", "event 0 is not an object");
  CHECK_THROWS_WITH(am::tools::summarize_trace_file(scratch("absent.json").string()), Catch::Contains("cannot read"));
}

TEST_CASE("trace summary: every truncation and random corruptions give a value_error or a summary", "[trace_summary]") {
  std::string text = hand_made_trace;
  std::size_t refused = 0, read = 0;
  auto attempt = [&](const std::string& input) {
    try {
      auto s = am::tools::summarize_trace(input);
      ++read;
      for (auto& t : s.tracks)
        CHECK(t.busy_us >= 0);
    } catch (const am::value_error& e) {
      ++refused;
      CHECK_THAT(std::string(e.what()), Catch::StartsWith("trace: "));
    }
  };
  for (std::size_t n = 0; n < text.size(); ++n)
    attempt(text.substr(0, n));
  std::mt19937 rng(12); // fixed: the same inputs every run
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  const std::string alphabet = "{}[]\":,.-+eE0123456789 ntfXBEiM\\\x01\xff";
  for (int round = 0; round < 3000 && std::chrono::steady_clock::now() < deadline; ++round) {
    std::string bad = text;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      auto at = rng() % bad.size();
      switch (rng() % 3) {
      case 0: bad[at] = alphabet[rng() % alphabet.size()]; break;
      case 1: bad.erase(at, 1 + rng() % 8); break;
      default: bad.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      }
      if (bad.empty())
        bad = "{";
    }
    attempt(bad);
  }
  CHECK(refused > text.size() / 2);
  CHECK(read > 0); // some corruptions (inside a name) still give a trace
}

#if AM_HAVE_PNG
namespace {
struct png_image_read {
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, colour_type = 0;
  std::vector<std::vector<png_byte>> rows;
};

png_image_read read_png(const std::string& path) {
  png_image_read r;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  png_byte signature[8];
  REQUIRE(std::fread(signature, 1, 8, f) == 8);
  REQUIRE(png_sig_cmp(signature, 0, 8) == 0);
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    std::fclose(f);
    FAIL("libpng could not read " << path);
  }
  png_init_io(png, f);
  png_set_sig_bytes(png, 8);
  png_read_info(png, info);
  r.width = png_get_image_width(png, info);
  r.height = png_get_image_height(png, info);
  r.bit_depth = png_get_bit_depth(png, info);
  r.colour_type = png_get_color_type(png, info);
  r.rows.assign(r.height, std::vector<png_byte>(png_get_rowbytes(png, info)));
  std::vector<png_bytep> pointers;
  for (auto& row : r.rows)
    pointers.push_back(row.data());
  png_read_image(png, pointers.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  std::fclose(f);
  return r;
}
} // namespace

TEST_CASE("trace summary --png writes a valid PNG of the expected size with the bars where the spans are",
          "[trace_summary]") {
  auto s = am::tools::summarize_trace(hand_made_trace);
  am::tools::timeline_layout layout;
  layout.width = 1044; // 1000 plot pixels: one per microsecond
  auto path = scratch("timeline.png").string();
  am::tools::write_timeline_png(s, path, layout);
  auto image = read_png(path);
  CHECK(image.width == 1044);
  CHECK(image.height == static_cast<png_uint_32>(layout.height_for(3)));
  CHECK(image.height == 6 + 3 * 18 + 22);
  CHECK(image.bit_depth == 8);
  CHECK(image.colour_type == PNG_COLOR_TYPE_RGB);
  auto pixel = [&](int x, int y) {
    auto& row = image.rows[static_cast<std::size_t>(y)];
    auto i = static_cast<std::size_t>(x) * 3;
    return std::array<int, 3>{row[i], row[i + 1], row[i + 2]};
  };
  int lane0 = layout.top_margin + layout.lane_height / 2;
  auto x_at = [&](double us) { return layout.left_margin + static_cast<int>(us); };
  std::array<int, 3> white{255, 255, 255}, grid{225, 225, 225};
  CHECK(pixel(x_at(450), lane0) != white); // span d
  CHECK(pixel(x_at(450), lane0) != grid);
  auto in_gap = pixel(x_at(315), lane0);   // the gap [230, 400)
  CHECK((in_gap == white || in_gap == grid));
  CHECK(pixel(x_at(10), lane0) == white);  // before the track's first span
  int lane2 = layout.top_margin + 2 * layout.lane_height + layout.lane_height / 2;
  CHECK(pixel(x_at(60), lane2) != white);  // pid 1's span [50, 75)
  CHECK(pixel(x_at(60), lane2) != std::array<int, 3>{246, 246, 246});
}

TEST_CASE("trace summary --png shades spans narrower than a pixel by the time they cover", "[trace_summary]") {
  // Track 0: [0, 500) holds 0.1 us spans every 1 us (10% busy); [500, 1000) 0.5 us spans back to back.
  std::string text = R"({"traceEvents": [)";
  for (int us = 0; us < 500; ++us)
    text += "{\"ph\":\"X\",\"name\":\"tiny\",\"pid\":0,\"tid\":0,\"ts\":" + std::to_string(us) + ",\"dur\":0.1},";
  for (int half = 1000; half < 2000; ++half)
    text += "{\"ph\":\"X\",\"name\":\"tiny\",\"pid\":0,\"tid\":0,\"ts\":" + std::to_string(half / 2.0) + ",\"dur\":0.5},";
  text.back() = ']';
  text += "}";
  auto s = am::tools::summarize_trace(text);
  REQUIRE(s.tracks.size() == 1);
  CHECK(s.tracks[0].busy_us == Approx(50 + 500));
  am::tools::timeline_layout layout;
  layout.width = 244; // 200 plot pixels: 5 us each
  auto path = scratch("shaded.png").string();
  am::tools::write_timeline_png(s, path, layout);
  auto image = read_png(path);
  auto pixel = [&](int x, int y) {
    auto& row = image.rows[static_cast<std::size_t>(y)];
    auto i = static_cast<std::size_t>(x) * 3;
    return std::array<int, 3>{row[i], row[i + 1], row[i + 2]};
  };
  int mid = layout.top_margin + layout.lane_height / 2;
  // 10% covered: the palest shade (15%), not a full bar; fully covered: the full shade.
  CHECK(pixel(layout.left_margin + 52, mid) == std::array<int, 3>{227, 230, 234});
  CHECK(pixel(layout.left_margin + 150, mid) == std::array<int, 3>{70, 90, 120});
}
#endif

TEST_CASE("actormesh trace summary prints the summary and draws the picture", "[trace_summary]") {
  auto trace = scratch("hand.json");
  std::ofstream(trace) << hand_made_trace;
  std::string out, err;
  CHECK(run({"trace", "summary", trace.string(), "--top", "2"}, out, err) == 0);
  CHECK(err.empty());
  CHECK_THAT(out, Catch::Contains("process 0 / TFRT_CPU_0"));
  CHECK_THAT(out, Catch::Contains("longest stalls"));
  auto png = scratch("cli.png");
  int status = run({"trace", "summary", trace.string(), "--png", png.string(), "--width", "640"}, out, err);
  if (am::tools::trace_png_available()) {
    CHECK(status == 0);
    CHECK_THAT(out, Catch::Contains("640x82 pixels"));
    CHECK(std::filesystem::file_size(png) > 100);
  } else {
    CHECK(status == 2);
    CHECK_THAT(err, Catch::Contains("no PNG support"));
  }
  auto garbage = scratch("garbage.json");
  std::ofstream(garbage) << R"({"traceEvents": [{"ph": "X", "ts": 1, "dur")";
  CHECK(run({"trace", "summary", garbage.string()}, out, err) == 2);
  CHECK_THAT(err, Catch::StartsWith("trace: not valid JSON"));
  CHECK_THAT(err, Catch::Contains(garbage.string()));
  CHECK(run({"trace", "summary", scratch("none.json").string()}, out, err) == 2);
  CHECK_THAT(err, Catch::Contains("cannot read"));
  CHECK(run({"trace", "summary", trace.string(), "--width", "5"}, out, err) == 2);
}

TEST_CASE("trace summary: the spans by name, with count, total, mean and max", "[trace_summary]") {
  auto s = am::tools::summarize_trace(hand_made_trace);
  REQUIRE(s.names.size() == 6);
  CHECK(s.names[0].name == "outer"); // 1000 us, the longest total first
  CHECK(s.names[0].count == 1);
  CHECK(s.names[1].name == "d");
  CHECK(s.names[1].total_us == 100);
  auto twice = am::tools::summarize_trace(R"([{"ph":"X","name":"mm","ts":0,"dur":4},{"ph":"X","name":"mm","ts":10,"dur":6},
                                               {"ph":"X","name":"add","ts":20,"dur":1}])");
  REQUIRE(twice.names.size() == 2);
  CHECK(twice.names[0].name == "mm");
  CHECK(twice.names[0].count == 2);
  CHECK(twice.names[0].total_us == 10);
  CHECK(twice.names[0].mean_us() == 5);
  CHECK(twice.names[0].max_us == 6);
  std::ostringstream out;
  am::tools::print_trace_summary(out, twice, 5, 1);
  CHECK_THAT(out.str(), Catch::Contains("spans by name, longest total first (2 names)"));
  CHECK_THAT(out.str(), Catch::Contains("  mm "));
  CHECK_THAT(out.str(), Catch::Contains("... and 1 more (--names)"));
}

TEST_CASE("trace summary: PyTorch's exports, whose pids and tids may be names, are read", "[trace_summary]") {
  // The shape of torch.profiler's export_chrome_trace: numeric pids for processes, named ones for
  // its "Spans" and "Traces" rows, tids like "stream 7", and its own fields (deviceProperties).
  auto s = am::tools::summarize_trace(R"({
    "schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}],
    "traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4242, "tid": 4242, "ts": 10, "dur": 20,
       "args": {"Input Dims": [[64, 64], [64, 64]]}},
      {"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": "stream 7", "ts": 15, "dur": 8},
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": "Spans", "tid": "Traces", "ts": 0, "dur": 40},
      {"ph": "f", "id": 1, "pid": 0, "tid": "stream 7", "ts": 15, "cat": "ac2g", "name": "ac2g", "bp": "e"}
    ],
    "traceName": "trace.json"})");
  REQUIRE(s.tracks.size() == 3);
  std::vector<std::string> names;
  for (auto& t : s.tracks)
    names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"pid 0 / stream 7", "pid 4242 / tid 4242", "Spans / Traces"});
  CHECK(s.names.at(0).name == "ProfilerStep#1");
  CHECK(s.events == 4);
}

TEST_CASE("trace summary: a gzip-compressed trace is read as it streams, a broken one is refused", "[trace_summary]") {
  auto plain = scratch("for_gzip.json");
  std::ofstream(plain) << hand_made_trace;
  auto packed = scratch("packed.json.gz");
  REQUIRE(std::system(("gzip -c " + plain.string() + " > " + packed.string()).c_str()) == 0);
  auto s = am::tools::summarize_trace_file(packed.string());
  auto expected = am::tools::summarize_trace(hand_made_trace);
  REQUIRE(s.tracks.size() == expected.tracks.size());
  CHECK(s.events == expected.events);
  CHECK(s.tracks[0].busy_us == expected.tracks[0].busy_us);
  // Cut in the middle of the compressed stream: refused, not a partial summary.
  const auto size = std::filesystem::file_size(packed);
  std::filesystem::resize_file(packed, size / 2);
  CHECK_THROWS_AS(am::tools::summarize_trace_file(packed.string()), am::value_error);
  // gzip's magic followed by garbage.
  std::ofstream(packed, std::ios::binary | std::ios::trunc) << "\x1f\x8b" << std::string(100, 'z');
  CHECK_THROWS_AS(am::tools::summarize_trace_file(packed.string()), am::value_error);
  CHECK_THROWS_WITH(am::tools::summarize_trace_file(scratch("").string()), Catch::Contains("not a regular file"));
}

TEST_CASE("trace summary --svg names every lane, has a legend of span names and escapes what it writes",
          "[trace_summary]") {
  auto s = am::tools::summarize_trace(hand_made_trace);
  auto svg = am::tools::timeline_svg(s, 800);
  CHECK_THAT(svg, Catch::StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\""));
  CHECK_THAT(svg, Catch::EndsWith("</svg>\n"));
  CHECK_THAT(svg, Catch::Contains(">process 0 / TFRT_CPU_0</text>"));
  CHECK_THAT(svg, Catch::Contains(">process 0 / host lane</text>"));
  CHECK_THAT(svg, Catch::Contains(">pid 1 / tid 5</text>"));
  CHECK_THAT(svg, Catch::Contains("<title>d (100.000 us)</title>")); // a bar's tooltip
  for (auto& n : s.names)
    CHECK_THAT(svg, Catch::Contains("<title>" + n.name + "</title>" + n.name + " (")); // the legend
  // A name with XML's characters and a control byte stays well formed.
  auto odd = am::tools::summarize_trace(
    R"([{"ph":"X","name":"a<b>&\"c\"\u0001","pid":1,"tid":1,"ts":0,"dur":50},{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"</text><script>"}}])");
  auto text = am::tools::timeline_svg(odd, 400);
  CHECK_THAT(text, Catch::Contains("a&lt;b&gt;&amp;&quot;c&quot; "));
  CHECK_THAT(text, !Catch::Contains("<script>"));
  CHECK_THAT(text, Catch::Contains("&lt;/text&gt;&lt;script&gt;"));
  CHECK_THROWS_WITH(am::tools::timeline_svg(s, 100), Catch::Contains("200 to 16384"));
  std::string out, err;
  auto trace = scratch("svg.json");
  std::ofstream(trace) << hand_made_trace;
  auto file = scratch("cli.svg");
  CHECK(run({"trace", "summary", trace.string(), "--svg", file.string(), "--width", "640"}, out, err) == 0);
  CHECK_THAT(out, Catch::Contains("(SVG, 640 pixels wide, lanes named, with a legend)"));
  CHECK(std::filesystem::file_size(file) > 500);
}
