// The progress display of `actormesh stress` (tools/progress_display.hpp): plain lines at each 10%
// step when the output is not a terminal, a bar redrawn in place with a carriage return when it is.
#include "tools/progress_display.hpp"

#include <catch2/catch.hpp>

#include <sstream>

TEST_CASE("progress: plain output gets one line per 10% step and no carriage return", "[unit][stress_command]") {
  std::ostringstream out;
  am::tools::progress_display display(out, false, "rounds");
  for (int done = 0; done <= 1000; done += 5)
    display.update(done, 1000);
  display.finish();
  auto text = out.str();
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.find("progress: 0% (0 of 1000 rounds)\n") != std::string::npos);
  CHECK(text.find("progress: 50% (500 of 1000 rounds)\n") != std::string::npos);
  CHECK(text.find("progress: 100% (1000 of 1000 rounds)\n") != std::string::npos);
  std::size_t lines = 0;
  for (char c : text)
    lines += c == '\n' ? 1 : 0;
  CHECK(lines == 11);
}

TEST_CASE("progress: a terminal gets a bar redrawn in place, ended by one newline", "[unit][stress_command]") {
  std::ostringstream out;
  am::tools::progress_display display(out, true, "rounds");
  display.update(0, 4);
  display.update(4, 4); // the last update is always drawn
  display.finish();
  auto text = out.str();
  CHECK(text.find("\r[........................................]   0% 0/4 rounds") != std::string::npos);
  CHECK(text.find("\r[########################################] 100% 4/4 rounds") != std::string::npos);
  CHECK(text.back() == '\n');
  CHECK(text.find('\n') == text.size() - 1);
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
