// Traces recorded in code (am::start_trace, am::trace_scope, stop_trace): the file is Chrome's trace
// event JSON, scopes nest per thread, nothing is recorded or written while off, an unwritable path
// is refused with a message that names it, and a budget bounds the events kept (the rest counted).
#include "actormesh/observability/trace.hpp"
#include "observability/trace_buffer.hpp"

#include "actormesh/actors/errors.hpp"
#include "support/trace_file.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <sys/stat.h>
#include <unistd.h>

using am::testing::read_trace_file;
using am::testing::trace_temp_path;


TEST_CASE("trace: scopes recorded in code make a valid, nested trace", "[unit][trace]") {
  const auto path = trace_temp_path("scopes.json");
  std::filesystem::remove(path);
  am::start_trace(path);
  CHECK(am::trace_enabled());
  for (int i = 0; i < 10; ++i) {
    am::trace_scope outer("outer");
    am::trace_scope inner("inner \"quoted\" \\ name");
  }
  CHECK(am::stop_trace() == path);
  CHECK_FALSE(am::trace_enabled());
  auto t = read_trace_file(path);
  CHECK(t.nesting_error.empty());
  CHECK(t.count("user", "outer") == 10);
  CHECK(t.count("user", "inner \"quoted\" \\ name") == 10);
  CHECK(t.process_names.at(1) == "process 0"); // pid = process + 1: Perfetto keeps pid 0 for the kernel
  CHECK(t.other.at("dropped_events").get<std::int64_t>() == 0);
  std::filesystem::remove(path);
}

TEST_CASE("trace: off by default, nothing is recorded or written", "[unit][trace]") {
  CHECK_FALSE(am::trace_enabled());
  { am::trace_scope ignored("while off"); }
  CHECK(am::stop_trace().empty()); // no trace was started
  // The next session holds only what it recorded.
  const auto path = trace_temp_path("after_off.json");
  am::start_trace(path);
  { am::trace_scope one("on"); }
  am::stop_trace();
  auto t = read_trace_file(path);
  CHECK(t.count("user", "while off") == 0);
  CHECK(t.count("user", "on") == 1);
  std::filesystem::remove(path);
}

TEST_CASE("trace: an unwritable path is refused with a message naming it", "[unit][trace]") {
  CHECK_THROWS_WITH(am::start_trace("/nonexistent-folder/trace.json"),
                    Catch::Contains("cannot write the trace to '/nonexistent-folder/trace.json'")
                      && Catch::Contains("does not exist"));
  CHECK_THROWS_WITH(am::start_trace(std::filesystem::temp_directory_path().string()),
                    Catch::Contains("it is a directory"));
  CHECK_THROWS_AS(am::start_trace(""), am::value_error);
  CHECK_FALSE(am::trace_enabled());
  if (::geteuid() != 0) {
    const auto folder = trace_temp_path("readonly");
    std::filesystem::create_directory(folder);
    std::filesystem::permissions(folder, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    CHECK_THROWS_WITH(am::start_trace(folder + "/t.json"), Catch::Contains("is not writable"));
    std::filesystem::permissions(folder, std::filesystem::perms::owner_all);
    std::filesystem::remove_all(folder);
  }
}

TEST_CASE("trace: a second start while recording is refused", "[unit][trace]") {
  const auto path = trace_temp_path("twice.json");
  am::start_trace(path);
  CHECK_THROWS_WITH(am::start_trace(path), Catch::Contains("already being recorded"));
  am::stop_trace();
  std::filesystem::remove(path);
}

TEST_CASE("trace: the event budget bounds memory and the file counts what was dropped", "[unit][trace]") {
  const auto path = trace_temp_path("budget.json");
  ::setenv("AM_TRACE_MAX_EVENTS", "5000", 1);
  am::start_trace(path);
  ::unsetenv("AM_TRACE_MAX_EVENTS");
  for (int i = 0; i < 20000; ++i)
    am::trace_scope s("many");
  am::stop_trace();
  auto t = read_trace_file(path);
  const auto kept = t.count("user", "many");
  CHECK(kept >= 4096);
  CHECK(kept <= 8192); // the budget, rounded up to whole chunks of 4096
  CHECK(t.other.at("dropped_events").get<std::int64_t>() == static_cast<std::int64_t>(20000 - kept));
  std::filesystem::remove(path);
}

namespace {

/// The inode of `path` after it changed from `before` (0: the file's first inode, once it exists),
/// or `before` when it did not within `wait`. A flush writes a temporary file and renames it over
/// the trace, so every flush gives the file a new inode.
ino_t trace_inode_after_change(const std::string& path, ino_t before, std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  struct stat st {};
  while (std::chrono::steady_clock::now() < until) {
    if (::stat(path.c_str(), &st) == 0 && st.st_ino != before)
      return st.st_ino;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return before;
}

} // namespace

TEST_CASE("trace: the periodic flush rewrites the file while events come, and not once the budget is spent",
          "[unit][trace]") {
  const auto path = trace_temp_path("flush_when_new.json");
  std::filesystem::remove(path);
  ::setenv("AM_TRACE_MAX_EVENTS", "5000", 1);
  ::setenv("AM_TRACE_FLUSH_SECONDS", "1", 1);
  am::start_trace(path);
  ::unsetenv("AM_TRACE_MAX_EVENTS");
  ::unsetenv("AM_TRACE_FLUSH_SECONDS");
  for (int i = 0; i < 100; ++i)
    am::trace_scope s("early");
  const auto first = trace_inode_after_change(path, 0, std::chrono::seconds(10));
  REQUIRE(first != 0); // flushed within its second
  for (int i = 0; i < 100; ++i)
    am::trace_scope s("later");
  const auto second = trace_inode_after_change(path, first, std::chrono::seconds(10));
  CHECK(second != first); // new events: the next flush wrote them
  for (int i = 0; i < 20000; ++i) // past the budget: every later event is dropped
    am::trace_scope s("many");
  const auto full = trace_inode_after_change(path, second, std::chrono::seconds(10));
  CHECK(full != second);
  // Nothing new can come: two more flush intervals leave the file as it is.
  CHECK(trace_inode_after_change(path, full, std::chrono::milliseconds(2500)) == full);
  am::stop_trace();
  auto t = read_trace_file(path);
  CHECK(t.count("user", "early") == 100);
  CHECK(t.count("user", "later") == 100);
  CHECK(t.other.at("dropped_events").get<std::int64_t>() > 0); // the final write still counts the drops
  std::filesystem::remove(path);
}

TEST_CASE("trace: in a ring (AM_TRACE_RING=1) the last events are kept and the oldest written over", "[unit][trace]") {
  const auto path = trace_temp_path("ring.json");
  ::setenv("AM_TRACE_MAX_EVENTS", "5000", 1);
  ::setenv("AM_TRACE_RING", "1", 1);
  am::start_trace(path);
  ::unsetenv("AM_TRACE_MAX_EVENTS");
  ::unsetenv("AM_TRACE_RING");
  for (int i = 0; i < 100; ++i)
    am::trace_scope s("first");
  for (int i = 0; i < 30000; ++i)
    am::trace_scope s("middle");
  for (int i = 0; i < 100; ++i)
    am::trace_scope s("last");
  am::stop_trace();
  auto t = read_trace_file(path);
  CHECK(t.nesting_error.empty());
  CHECK(t.count("user", "first") == 0);
  CHECK(t.count("user", "last") == 100);
  const auto kept = t.count("user", "middle") + 100;
  CHECK(kept >= 4096 - 16);
  CHECK(kept <= 8192);
  CHECK(t.other.at("dropped_events").get<std::int64_t>() == 0);
  CHECK(t.other.at("overwritten_events").get<std::int64_t>() == static_cast<std::int64_t>(30200 - kept));
  // The next session starts empty and, without the variable, drops again.
  am::start_trace(path);
  { am::trace_scope s("alone"); }
  am::stop_trace();
  auto again = read_trace_file(path);
  CHECK(again.count("user", "alone") == 1);
  CHECK(again.count("user", "last") == 0);
  CHECK(again.other.at("overwritten_events").get<std::int64_t>() == 0);
  std::filesystem::remove(path);
}

TEST_CASE("trace: names with control characters and bytes that are not UTF-8 stay valid JSON", "[unit][trace]") {
  const auto path = trace_temp_path("bytes.json");
  am::start_trace(path);
  { am::trace_scope a(std::string("tab\tnew\nline \x01 bell")); }
  { am::trace_scope b(std::string("bad \xff\xc3 byte, good \xc3\xa9")); }
  am::stop_trace();
  auto t = read_trace_file(path); // the strict reader would refuse raw control bytes
  CHECK(t.count("user", "tab\tnew\nline \x01 bell") == 1);
  CHECK(t.count("user", "bad \xef\xbf\xbd\xef\xbf\xbd byte, good \xc3\xa9") == 1);
  std::filesystem::remove(path);
}

TEST_CASE("trace: a step schedule skips its wait, drops its warm-up and writes after its active steps",
          "[unit][trace]") {
  const auto path = trace_temp_path("schedule.json");
  std::filesystem::remove(path);
  am::start_trace(path, am::trace_schedule{2, 1, 3});
  std::vector<std::string> written;
  for (int step = 0; step < 8; ++step) {
    CHECK(am::trace_enabled() == (step >= 2 && step < 6));
    { am::trace_scope s("step " + std::to_string(step)); } // the step's work, then its end
    if (auto file = am::trace_step(); !file.empty())
      written.push_back(file);
  }
  CHECK(written == std::vector<std::string>{path});
  auto t = read_trace_file(path);
  for (int step = 0; step < 8; ++step) {
    CAPTURE(step);
    // Steps 0 and 1 wait, step 2 is the warm-up (recorded, then dropped when the active steps
    // began), steps 3..5 are kept, and nothing after them is recorded.
    CHECK(t.count("user", "step " + std::to_string(step)) == (step >= 3 && step <= 5 ? 1u : 0u));
  }
  CHECK(am::trace_step().empty()); // no schedule open: nothing
  std::filesystem::remove(path);
}

TEST_CASE("trace: a schedule stopped early writes what it kept, and bad schedules are refused", "[unit][trace]") {
  const auto path = trace_temp_path("schedule_early.json");
  am::start_trace(path, am::trace_schedule{5, 0, 2});
  am::trace_step();
  CHECK_FALSE(am::trace_enabled());
  CHECK(am::stop_trace() == path); // still waiting: an empty, valid trace
  auto t = read_trace_file(path);
  CHECK(t.events.empty());
  CHECK_THROWS_WITH(am::start_trace(path, am::trace_schedule{-1, 0, 1}), Catch::Contains("0 or more"));
  CHECK_FALSE(am::trace_enabled());
  std::filesystem::remove(path);
}
