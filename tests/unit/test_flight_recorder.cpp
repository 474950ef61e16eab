// The flight recorder's ring buffer, its dump format and the hang report, on values made here.
#include "observability/flight_dump.hpp"
#include "observability/flight_recorder.hpp"
#include "observability/hang_report.hpp"

#include "actormesh/actors/errors.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <thread>
#include <vector>

namespace obs = am::observability;

namespace {

obs::flight_entry entry(const std::string& comm, std::uint64_t step, const std::string& signature, obs::op_state s) {
  obs::flight_entry e;
  e.communicator = comm;
  e.step = step;
  e.op = signature.substr(0, signature.find(' '));
  e.signature = signature;
  e.participants = {0, 1, 2};
  e.state = s;
  e.issued_us = 1'000'000;
  e.checked_us = s == obs::op_state::issued ? 0 : 1'000'100;
  e.ended_us = s == obs::op_state::completed || s == obs::op_state::failed ? 1'000'200 : 0;
  if (s == obs::op_state::failed)
    e.error = "it failed";
  return e;
}

obs::flight_dump dump_of(int process, std::vector<obs::flight_entry> entries) {
  obs::flight_dump d;
  d.process = process;
  d.reason = "test";
  d.dumped_us = 3'000'000;
  d.entries = std::move(entries);
  return d;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("flight recorder: keeps the last N entries, and a mark of an evicted one is ignored", "[flight_recorder]") {
  obs::flight_recorder r(3);
  std::vector<std::uint64_t> ids;
  for (int k = 1; k <= 5; ++k)
    ids.push_back(r.issue("c", static_cast<std::uint64_t>(k), "all_gather", "uint8", "[8]", "all_gather uint8[8]", {0, 1}));
  r.mark(ids[0], obs::op_state::completed); // evicted: ignored
  r.mark(ids[3], obs::op_state::checked);
  r.mark(ids[4], obs::op_state::failed, "boom");
  auto e = r.entries();
  REQUIRE(e.size() == 3);
  CHECK(e[0].step == 3);
  CHECK(e[0].state == obs::op_state::issued);
  CHECK(e[1].state == obs::op_state::checked);
  CHECK(e[1].checked_us >= e[1].issued_us);
  CHECK(e[2].state == obs::op_state::failed);
  CHECK(e[2].error == "boom");
  CHECK(e[2].ended_us >= e[2].issued_us);
}

TEST_CASE("flight recorder: capacity 0 records nothing", "[flight_recorder]") {
  obs::flight_recorder r(0);
  CHECK(r.issue("c", 1, "barrier", "", "", "barrier 'x'", {0}) == 0);
  r.mark(0, obs::op_state::completed);
  CHECK(r.entries().empty());
}

TEST_CASE("flight recorder: many threads issue and mark at once", "[flight_recorder]") {
  obs::flight_recorder r(64);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&r, t] {
      for (int k = 0; k < 2000; ++k) {
        auto id = r.issue("c" + std::to_string(t), static_cast<std::uint64_t>(k), "all_gather", "", "", "x", {0});
        r.mark(id, obs::op_state::completed);
      }
    });
  for (auto& th : threads)
    th.join();
  auto e = r.entries();
  REQUIRE(e.size() == 64);
  for (std::size_t k = 1; k < e.size(); ++k)
    CHECK(e[k].record == e[k - 1].record + 1);
  CHECK(e.back().record == 16000);
}

TEST_CASE("flight dump: written and parsed back field for field, tabs and newlines become spaces", "[flight_recorder]") {
  auto d = dump_of(2, {entry("comm\tA", 7, "all_gather uint8[8]", obs::op_state::failed)});
  d.entries[0].error = "line one\nline two";
  std::ostringstream out;
  obs::write_flight_dump(out, d);
  auto back = obs::parse_flight_dump(out.str(), "test");
  CHECK(back.process == 2);
  CHECK(back.dumped_us == 3'000'000);
  REQUIRE(back.entries.size() == 1);
  const auto& e = back.entries[0];
  CHECK(e.communicator == "comm A");
  CHECK(e.step == 7);
  CHECK(e.signature == "all_gather uint8[8]");
  CHECK(e.participants == std::vector<int>{0, 1, 2});
  CHECK(e.state == obs::op_state::failed);
  CHECK(e.error == "line one line two");
  CHECK(e.ended_us == 1'000'200);
}

TEST_CASE("flight dump: malformed text is refused with the line", "[flight_recorder]") {
  CHECK_THROWS_WITH(obs::parse_flight_dump("", "f"), Catch::Contains("it is empty"));
  CHECK_THROWS_WITH(obs::parse_flight_dump("hello\n", "f"), Catch::Contains("line 1"));
  CHECK_THROWS_WITH(obs::parse_flight_dump("actormesh flight recorder 1\nentry\t1\t2\n", "f"),
                    Catch::Contains("line 2: an entry has 2 fields"));
  CHECK_THROWS_WITH(obs::parse_flight_dump("actormesh flight recorder 1\nprocess -1\n", "f"),
                    Catch::Contains("not a non-negative integer"));
  CHECK_THROWS_WITH(obs::parse_flight_dump("actormesh flight recorder 1\nprocess 99999999999999999999\n", "f"),
                    Catch::Contains("not a non-negative integer"));
  CHECK_THROWS_WITH(obs::parse_flight_dump("actormesh flight recorder 1\nreason x\n", "f"),
                    Catch::Contains("names no process"));
  CHECK_THROWS_AS(obs::read_flight_dumps("/nonexistent/dir"), am::value_error);
}

TEST_CASE("hang report: a process behind, a desync, and sequences every process completed", "[flight_recorder]") {
  using S = obs::op_state;
  std::vector<obs::flight_dump> dumps{
    dump_of(0, {entry("w", 4, "all_gather uint8[8]", S::completed), entry("w", 5, "all_gather uint8[8]", S::failed),
                entry("barriers", 2, "barrier 'b'", S::completed)}),
    dump_of(1, {entry("w", 4, "all_gather uint8[8]", S::completed), entry("barriers", 2, "barrier 'b'", S::completed)}),
    dump_of(2, {entry("w", 5, "all_gather uint8[8]", S::issued), entry("barriers", 2, "barrier 'b'", S::completed)}),
  };
  const auto report = obs::explain_hang(dumps);
  INFO(report);
  CHECK(contains(report, "3 flight recorder dumps (processes 0, 1, 2)"));
  CHECK(contains(report, "process 1 stopped at step 4 (all_gather uint8[8]): it completed it, and never issued step 5"));
  CHECK(contains(report, "process 0 at step 5 (all_gather uint8[8]) failed in it after 0.2 ms: it failed"));
  CHECK(contains(report, "process 2 at step 5 (all_gather uint8[8]) issued it and was waiting for the others to "
                         "issue it (2.000 s before its dump)"));
  CHECK(contains(report, "=> process 1 is behind: processes 0, 2 wait for it at step 5 (all_gather uint8[8])"));
  CHECK(contains(report, "'barriers': every process completed step 2"));
  CHECK_FALSE(contains(report, "desync"));

  dumps[1].entries[0] = entry("w", 5, "broadcast uint8[8] root=0", S::failed);
  const auto desync = obs::explain_hang(dumps);
  INFO(desync);
  CHECK(contains(desync, "=> desync at step 5: processes 0, 2 issued all_gather uint8[8]; process 1 issued "
                         "broadcast uint8[8] root=0"));

  // A participant without a dump of its own.
  dumps.pop_back();
  const auto missing = obs::explain_hang(dumps);
  INFO(missing);
  CHECK(contains(missing, "process 2 wrote no dump"));
}
