// Many threads recording at once (2 to 64, each for a bounded time and count): every event lands,
// the tracks stay well nested, one per thread; and overlapping events on one track (collectives
// issued before the last ended) are moved to sibling tracks so that the file stays well nested.
#include "actormesh/observability/trace.hpp"
#include "observability/trace_buffer.hpp"
#include "observability/trace_writer.hpp"

#include "support/trace_file.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using am::testing::read_trace_file;
using am::testing::trace_temp_path;


TEST_CASE("trace: threads recording at once give one well-nested track each", "[unit][trace]") {
  for (int threads : {2, 8, 64}) {
    CAPTURE(threads);
    const auto path = trace_temp_path("threads.json");
    am::start_trace(path);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    std::vector<int> done(static_cast<std::size_t>(threads), 0);
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k)
      pool.emplace_back([&, k] {
        for (int i = 0; i < 2000 && std::chrono::steady_clock::now() < deadline; ++i) {
          am::trace_scope a("a");
          { am::trace_scope b("b"); }
          am::trace_scope c("c " + std::to_string(k));
          ++done[static_cast<std::size_t>(k)];
        }
      });
    for (auto& t : pool)
      t.join();
    am::stop_trace();
    auto t = read_trace_file(path);
    CHECK(t.nesting_error.empty());
    std::size_t total = 0;
    for (int k = 0; k < threads; ++k) {
      total += static_cast<std::size_t>(done[static_cast<std::size_t>(k)]);
      CHECK(t.count("user", "c " + std::to_string(k)) == static_cast<std::size_t>(done[static_cast<std::size_t>(k)]));
    }
    CHECK(t.count("user", "a") == total);
    CHECK(t.count("user", "b") == total);
    CHECK(t.tracks_of("user").size() == static_cast<std::size_t>(threads));
    CHECK(t.other.at("dropped_events").get<std::int64_t>() == 0);
    std::filesystem::remove(path);
  }
}

TEST_CASE("trace: events that overlap on one track go to sibling tracks", "[unit][trace]") {
  using namespace am::observability;
  collected_trace c;
  auto add = [&](std::int64_t start, std::int64_t dur, const char* name) {
    collected_event e;
    e.e.start_ns = start;
    e.e.dur_ns = dur;
    e.e.track = track::collective_base + 1;
    e.e.category = "collective";
    e.name = name;
    c.events.push_back(e);
  };
  add(0, 100, "first");
  add(50, 100, "second, issued before the first ended"); // overlaps without nesting
  add(60, 10, "inside both");
  add(120, 10, "inside the second");
  add(200, 5, "after");
  c.track_names.push_back({track::collective_base + 1, "collectives: world"});
  const auto path = trace_temp_path("overlap.json");
  REQUIRE(write_text_file(path, trace_json(c, {})).empty());
  auto t = read_trace_file(path);
  CHECK(t.nesting_error.empty());
  CHECK(t.count("collective") == 5);
  CHECK(t.tracks_of("collective").size() == 2);
  CHECK(t.track_names.at({1, overlap_track(track::collective_base + 1, 1)}) == "collectives: world (overlap 1)");
  std::filesystem::remove(path);
}
