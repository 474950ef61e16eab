// The progress display of `actormesh stress`, the demos and the benchmarks
// (tools/progress_display.hpp): plain lines at each 10% step when the output is not a terminal, a
// bar fitted to the terminal's width, redrawn in place with a carriage return and a clear to the end
// of the line when it is; floor rounding, counts past the total, and only process 0 under a launcher.
#include "tools/progress_display.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::size_t count_lines(const std::string& text) {
  std::size_t lines = 0;
  for (char c : text)
    lines += c == '\n' ? 1 : 0;
  return lines;
}

/// The frames a terminal display drew: what follows each '\r', without the clear-to-end-of-line.
std::vector<std::string> frames(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while ((at = text.find('\r', at)) != std::string::npos) {
    const auto end = text.find("\x1b[K", at);
    REQUIRE(end != std::string::npos); // every frame clears what a longer one left
    out.push_back(text.substr(at + 1, end - at - 1));
    at = end;
  }
  return out;
}

} // namespace

TEST_CASE("progress: plain output gets one line per 10% step and no carriage return", "[unit][stress_command]") {
  std::ostringstream out;
  am::tools::progress_display display(out, false, "rounds");
  for (int done = 0; done <= 1000; done += 5)
    display.update(done, 1000);
  display.finish();
  auto text = out.str();
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.find("progress: 0% (0 of 1000 rounds, 0:00 elapsed)\n") != std::string::npos);
  CHECK(text.find("progress: 50% (500 of 1000 rounds, ") != std::string::npos);
  CHECK(text.find(" left)\n") != std::string::npos); // the estimate of the time left
  CHECK(text.find("progress: 100% (1000 of 1000 rounds, ") != std::string::npos);
  CHECK(count_lines(text) == 11);
}

TEST_CASE("progress: a terminal gets a bar redrawn in place with elapsed time, ended by one newline",
          "[unit][stress_command]") {
  std::ostringstream out;
  am::tools::progress_display display(out, true, "rounds", 80);
  display.update(0, 4);
  display.update(4, 4); // the last update is always drawn
  display.finish();
  auto text = out.str();
  const auto drawn = frames(text);
  REQUIRE(drawn.size() == 2);
  CHECK(drawn[0] == "[........................................]   0% 0/4 rounds 0:00");
  CHECK(drawn[1].rfind("[########################################] 100% 4/4 rounds 0:00 ", 0) == 0);
  CHECK(text.back() == '\n');
  CHECK(text.find('\n') == text.size() - 1);
}

TEST_CASE("progress: 99.6% is shown as 99%, not 100%", "[unit][stress_command]") {
  std::ostringstream bar;
  am::tools::progress_display terminal(bar, true, "steps", 80);
  terminal.update(996, 1000);
  CHECK(frames(bar.str()).at(0).find(" 99% 996/1000 steps") != std::string::npos);
  std::ostringstream plain;
  am::tools::progress_display lines(plain, false, "steps");
  lines.update(999, 1000);
  CHECK(plain.str().rfind("progress: 90% (999 of 1000 steps", 0) == 0);
}

TEST_CASE("progress: counts past the total or below zero are shown as they are, the bar held full or empty",
          "[unit][stress_command]") {
  std::ostringstream out;
  am::tools::progress_display display(out, true, "items", 80);
  REQUIRE_NOTHROW(display.update(-5, 10));
  REQUIRE_NOTHROW(display.update(1500, 1000));
  REQUIRE_NOTHROW(display.update(std::numeric_limits<std::int64_t>::max(), 1));
  const auto drawn = frames(out.str());
  REQUIRE(drawn.size() == 3);
  INFO(drawn[0] << "\n" << drawn[1] << "\n" << drawn[2]);
  CHECK(drawn[0].find("[........................................]   0% -5/10 items") == 0);
  // Full (the bar may be narrower: the longer status takes its room).
  CHECK(drawn[1].rfind("[###", 0) == 0);
  CHECK(drawn[1].find('.') > drawn[1].find(']'));
  CHECK(drawn[1].find("] 100% 1500/1000 items") != std::string::npos);
  CHECK(drawn[2].find("] 100% 9223372036854775807/1 items") != std::string::npos);
  std::ostringstream plain;
  am::tools::progress_display lines(plain, false, "items");
  REQUIRE_NOTHROW(lines.update(1500, 1000));
  CHECK(plain.str().rfind("progress: 100% (1500 of 1000 items", 0) == 0);
}

TEST_CASE("progress: the line fits the terminal's width, the bar first to go", "[unit][stress_command]") {
  for (int columns : {120, 60, 40, 30, 12, 1}) {
    INFO("columns " << columns);
    std::ostringstream out;
    am::tools::progress_display display(out, true, "rounds", columns);
    display.update(123, 1000);
    const auto drawn = frames(out.str());
    REQUIRE(drawn.size() == 1);
    CHECK(static_cast<int>(drawn[0].size()) <= std::max(columns - 1, 1));
    CHECK((drawn[0].front() == '[') == (columns >= 60)); // below that, the status alone
  }
}

TEST_CASE("progress: under a launcher only process 0 shows it, unless AM_PROGRESS says all or off",
          "[unit][stress_command]") {
  const auto shown = [](std::map<std::string, std::string> env) {
    return am::tools::progress_shown_here([env](const char* name) -> const char* {
      auto it = env.find(name);
      return it == env.end() ? nullptr : it->second.c_str();
    });
  };
  CHECK(shown({}));
  CHECK(shown({{"AM_PROCESS_ID", "0"}}));
  CHECK_FALSE(shown({{"AM_PROCESS_ID", "3"}}));
  CHECK(shown({{"AM_PROCESS_ID", "3"}, {"AM_PROGRESS", "all"}}));
  CHECK_FALSE(shown({{"AM_PROCESS_ID", "0"}, {"AM_PROGRESS", "off"}}));
  CHECK_FALSE(shown({{"AM_PROGRESS", "off"}}));
  CHECK_FALSE(shown({{"AM_PROCESS_ID", "2"}, {"AM_PROGRESS", "bogus"}}));
}

TEST_CASE("progress: elapsed and left times read as m:ss, or h:mm:ss from an hour", "[unit][stress_command]") {
  CHECK(am::tools::clock_text(0) == "0:00");
  CHECK(am::tools::clock_text(7.9) == "0:07");
  CHECK(am::tools::clock_text(750) == "12:30");
  CHECK(am::tools::clock_text(3723) == "1:02:03");
  CHECK(am::tools::clock_text(-3) == "0:00");
  CHECK(am::tools::clock_text(std::nan("")) == "0:00");
  CHECK(am::tools::clock_text(std::numeric_limits<double>::infinity()) == "0:00");
}

TEST_CASE("progress: nothing for an empty job, and the standard output of a test is not a terminal",
          "[unit][stress_command]") {
  std::ostringstream out;
  am::tools::progress_display display(out, false, "rounds");
  display.update(0, 0);
  display.finish();
  CHECK(out.str().empty());
  CHECK_FALSE(am::tools::is_terminal(out));
}
