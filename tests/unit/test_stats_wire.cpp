// The live counters as they travel to `actormesh info --watch` (observability/stats_wire.hpp): a
// cluster's answers round-trip exactly, every truncation and random corruptions are refused with
// am::value_error (never a crash or an unbounded allocation), and the watch's rendering of them
// (text, JSON, clipped to the terminal).
#include "observability/stats_wire.hpp"
#include "tools/info_watch.hpp"

#include "actormesh/actors/errors.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <random>

using am::detail::stats::process_stats;

namespace {

std::vector<process_stats> sample() {
  process_stats a;
  a.process = 0;
  a.ok = true;
  a.snapshot.process_index = 0;
  a.snapshot.uptime_seconds = 12.5;
  a.snapshot.interval_seconds = 0.25;
  am::device_activity d;
  d.device_id = 1;
  d.device = "TFRT_CPU_1";
  d.calls_queued = 110;
  d.calls_done = 100;
  d.queue_depth = 10;
  d.calls_per_second = 400;
  d.has_memory = true;
  d.memory.bytes_in_use = 3 << 20;
  d.memory.peak_bytes_in_use = 5 << 20;
  d.memory.num_allocs = 77;
  a.snapshot.devices.push_back(d);
  am::lane_activity l;
  l.caller = 9;
  l.tasks_queued = 4;
  l.tasks_done = 3;
  l.queue_depth = 1;
  l.running = true;
  a.snapshot.lanes.push_back(l);
  a.snapshot.transfers.bytes_in_flight = 4096;
  a.snapshot.transfers.bytes_sent = 1 << 20;
  a.snapshot.transfers.transfers = 2;
  process_stats b;
  b.process = 1;
  b.error = "no answer within 2000 ms";
  return {a, b};
}

} // namespace

TEST_CASE("stats wire: a cluster's answers round-trip exactly", "[stats_wire]") {
  auto all = am::detail::stats::decode_cluster_stats(am::detail::stats::encode(sample()));
  REQUIRE(all.size() == 2);
  auto& s = all[0].snapshot;
  CHECK(all[0].ok);
  CHECK(s.uptime_seconds == 12.5);
  CHECK(s.interval_seconds == 0.25);
  REQUIRE(s.devices.size() == 1);
  CHECK(s.devices[0].device == "TFRT_CPU_1");
  CHECK(s.devices[0].calls_queued == 110);
  CHECK(s.devices[0].calls_done == 100);
  CHECK(s.devices[0].queue_depth == 10);
  CHECK(s.devices[0].calls_per_second == 400);
  CHECK(s.devices[0].memory.peak_bytes_in_use == (5u << 20));
  CHECK(s.devices[0].memory.num_allocs == 77);
  REQUIRE(s.lanes.size() == 1);
  CHECK(s.lanes[0].caller == 9);
  CHECK(s.lanes[0].running);
  CHECK(s.transfers.bytes_in_flight == 4096);
  CHECK(s.transfers.transfers == 2);
  CHECK_FALSE(all[1].ok);
  CHECK(all[1].error == "no answer within 2000 ms");
}

TEST_CASE("stats wire: truncations and corruptions are refused with value_error", "[stats_wire]") {
  auto bytes = am::detail::stats::encode(sample());
  for (std::size_t n = 0; n < bytes.size(); ++n)
    CHECK_THROWS_AS(am::detail::stats::decode_cluster_stats(bytes.substr(0, n)), am::value_error);
  CHECK_THROWS_AS(am::detail::stats::decode_cluster_stats(bytes + "x"), am::value_error);
  std::mt19937 rng(5);
  for (int round = 0; round < 2000; ++round) {
    auto bad = bytes;
    bad[rng() % bad.size()] = static_cast<char>(rng());
    try {
      am::detail::stats::decode_cluster_stats(bad); // a flipped count or flag may still decode
    } catch (const am::value_error&) {
    }
  }
  std::string huge_count("\xff\xff\xff\x7f", 4);
  CHECK_THROWS_AS(am::detail::stats::decode_cluster_stats(huge_count), am::value_error);
}

TEST_CASE("info --watch renders each process, its devices, lanes and transfers", "[stats_wire]") {
  auto text = am::tools::render_cluster_stats("127.0.0.1:5000", sample(), 2, 3);
  CHECK_THAT(text, Catch::StartsWith("cluster at 127.0.0.1:5000: 2 processes (refresh 2 of 3)\n"));
  CHECK_THAT(text, Catch::Contains("process 0  up 12.5 s  transfers: 4.0 KiB in flight, 1.0 MiB sent, 0 B received (2 done)"));
  CHECK_THAT(text, Catch::Contains("  TFRT_CPU_1                110        100      10      400.0      3.0 MiB      5.0 MiB\n"));
  CHECK_THAT(text, Catch::Contains("  lane of caller 9            4          3       1          - running\n"));
  CHECK_THAT(text, Catch::Contains("process 1: no counters: no answer within 2000 ms\n"));
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(am::tools::format_bytes(512) == "512 B");
  CHECK(am::tools::format_bytes(3.0 * (1 << 30)) == "3.00 GiB");
}

TEST_CASE("info --watch --json gives each refresh as one line of JSON with every field", "[stats_wire]") {
  auto line = am::tools::render_cluster_stats_json("127.0.0.1:5000", sample(), 4);
  REQUIRE(line.back() == '\n');
  CHECK(std::count(line.begin(), line.end(), '\n') == 1);
  auto j = nlohmann::json::parse(line);
  CHECK(j.at("coordinator") == "127.0.0.1:5000");
  CHECK(j.at("refresh") == 4);
  auto& p = j.at("processes");
  REQUIRE(p.size() == 2);
  CHECK(p[0].at("ok") == true);
  CHECK(p[0].at("uptime_seconds") == 12.5);
  CHECK(p[0].at("devices")[0].at("device") == "TFRT_CPU_1");
  CHECK(p[0].at("devices")[0].at("calls_queued") == 110);
  CHECK(p[0].at("devices")[0].at("queue_depth") == 10);
  CHECK(p[0].at("devices")[0].at("memory").at("peak_bytes_in_use") == (5u << 20));
  CHECK(p[0].at("lanes")[0].at("caller") == 9);
  CHECK(p[0].at("lanes")[0].at("running") == true);
  CHECK(p[0].at("transfers").at("bytes_in_flight") == 4096);
  CHECK(p[1].at("ok") == false);
  CHECK(p[1].at("error") == "no answer within 2000 ms");
}

TEST_CASE("info --watch clips a frame taller than the terminal and says how much it left out", "[stats_wire]") {
  std::string frame;
  for (int i = 0; i < 30; ++i)
    frame += "line " + std::to_string(i) + "\n";
  auto clipped = am::tools::clip_frame(frame, 10);
  CHECK(std::count(clipped.begin(), clipped.end(), '\n') == 10);
  CHECK_THAT(clipped, Catch::StartsWith("line 0\nline 1\n"));
  CHECK_THAT(clipped, Catch::Contains("line 8\n... 21 more lines (a taller terminal shows them"));
  CHECK_THAT(clipped, !Catch::Contains("line 9\n"));
  CHECK(am::tools::clip_frame(frame, 30) == frame);
  CHECK(am::tools::clip_frame(frame, 40) == frame);
  CHECK(am::tools::clip_frame(frame, 1) == frame); // too small to say anything useful: left whole
  CHECK(am::tools::clip_frame("", 10).empty());
}
