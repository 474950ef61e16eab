// `actormesh trace merge OUT IN...` and the merge under the launcher (tools/launch_trace.hpp): events
// of every input in one file, a pid an earlier input took renumbered (and said), the inputs kept by
// the command and removed by the launcher, negative times shifted to 0, the trace a launched
// program asks for (its --am-trace before AM_TRACE), and bad input refused with the file named.
#include "observability/trace_session.hpp"
#include "support/trace_file.hpp"
#include "tools/commands.hpp"
#include "tools/launch_trace.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace {

std::string merge_scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("am_trace_merge_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

/// A one-process trace: process `pid` named "process <pid - 1>", one span "<label>" at `ts`, and
/// inside it an arrow (flow id 0x2a) from 1 us to 3 us after its start.
void write_small_trace(const std::string& path, int pid, const std::string& label, double ts) {
  auto flow = [&](const char* ph, double at) {
    return std::string(R"({"name":"call","cat":"flow","ph":")") + ph + R"(","id":"0x2a","ts":)"
           + std::to_string(at) + R"(,"pid":)" + std::to_string(pid) + R"(,"tid":3})";
  };
  std::ofstream(path) << R"({"traceEvents":[{"name":"process_name","ph":"M","pid":)" << pid
                      << R"(,"tid":0,"args":{"name":"process )" << pid - 1 << R"("}},)"
                      << R"({"name":"thread_name","ph":"M","pid":)" << pid << R"(,"tid":3,"args":{"name":"lane"}},)"
                      << R"({"name":")" << label << R"(","cat":"user","ph":"X","ts":)" << ts
                      << R"(,"dur":5,"pid":)" << pid << R"(,"tid":3,"args":{}},)" << flow("s", ts + 1) << ','
                      << flow("f", ts + 3) << R"(],"otherData":{"process":)" << pid - 1 << "}}";
}

int run_merge_cli(std::vector<std::string> args, std::string& out, std::string& err) {
  std::vector<const char*> argv{"actormesh", "trace", "merge"};
  for (auto& a : args)
    argv.push_back(a.c_str());
  std::ostringstream o, e;
  const int status = am::tools::run_cli(static_cast<int>(argv.size()), argv.data(), o, e);
  out = o.str();
  err = e.str();
  return status;
}

} // namespace

TEST_CASE("trace merge: two traces of pid 1 become pids 1 and 2, and the inputs stay", "[unit][trace]") {
  const auto a = merge_scratch("a.json"), b = merge_scratch("b.json"), out = merge_scratch("ab.json");
  write_small_trace(a, 1, "from a", 10);
  write_small_trace(b, 1, "from b", -4); // started before a's zero: everything shifts by 4 us
  std::string text, err;
  REQUIRE(run_merge_cli({out, a, b}, text, err) == 0);
  CHECK_THAT(text, Catch::Contains("its pid 1 is pid 2 in the merged trace"));
  CHECK_THAT(text, Catch::Contains("trace merge: " + out + " from 2 files"));
  CHECK(std::filesystem::exists(a));
  CHECK(std::filesystem::exists(b));
  auto t = am::testing::read_trace_file(out);
  CHECK(t.nesting_error.empty());
  CHECK(t.count("user", "from a", 1) == 1);
  CHECK(t.count("user", "from b", 2) == 1);
  CHECK(t.count("user", "from b", 1) == 0);
  CHECK(t.process_names.size() == 2);
  for (auto& e : t.events)
    if (e.name == "from b")
      CHECK(e.ts == Approx(0.0));
  CHECK(t.other.at("processes").get<int>() == 2);
  // Both files' arrows had id 0x2a: the renumbered file's pair keeps one new id of its own.
  std::map<std::int64_t, std::set<std::string>> flow_ids; // pid -> ids of its arrows' ends
  for (auto& f : t.flows)
    flow_ids[f.pid].insert(f.id);
  CHECK(flow_ids[1] == std::set<std::string>{"0x2a"});
  REQUIRE(flow_ids[2].size() == 1);
  CHECK(*flow_ids[2].begin() != "0x2a");
  CHECK(t.flows.size() == 4);
  std::filesystem::remove_all(std::filesystem::path(out).parent_path());
}

TEST_CASE("trace merge: the launcher's merge keeps pids and removes the rank files", "[unit][trace]") {
  const auto base = merge_scratch("launch.json");
  write_small_trace(base + ".rank0", 1, "zero", 1);
  write_small_trace(base + ".rank1", 2, "one", 2);
  std::ostringstream err;
  am::tools::merge_launch_traces(base, 0, 2, 2, err);
  CHECK(err.str().empty());
  CHECK_FALSE(std::filesystem::exists(base + ".rank0"));
  CHECK_FALSE(std::filesystem::exists(base + ".rank1"));
  auto t = am::testing::read_trace_file(base);
  CHECK(t.count("user", "zero", 1) == 1);
  CHECK(t.count("user", "one", 2) == 1);
  // A second runtime's numbered files are merged into its own numbered trace.
  const auto second = am::observability::numbered_trace_path(base, 2);
  write_small_trace(second + ".rank1", 2, "second", 3);
  std::ostringstream err2;
  am::tools::merge_launch_traces(base, 0, 2, 2, err2);
  CHECK_THAT(err2.str(), Catch::Contains("no process wrote one"));
  CHECK_THAT(err2.str(), Catch::Contains("trace " + second + " merged from 1 of 2 processes"));
  CHECK(am::testing::read_trace_file(second).count("user", "second", 2) == 1);
  std::filesystem::remove_all(std::filesystem::path(base).parent_path());
}

TEST_CASE("trace merge: numbered trace paths for later runtimes", "[unit][trace]") {
  using am::observability::numbered_trace_path;
  CHECK(numbered_trace_path("t.json", 1) == "t.json");
  CHECK(numbered_trace_path("t.json", 2) == "t.2.json");
  CHECK(numbered_trace_path("/tmp/x.y/t.json", 3) == "/tmp/x.y/t.3.json");
  CHECK(numbered_trace_path("dir/trace", 2) == "dir/trace.2");
  CHECK(numbered_trace_path(".hidden", 2) == ".hidden.2");
}

TEST_CASE("trace merge: a launched program's --am-trace wins over AM_TRACE", "[unit][trace]") {
  using am::tools::launch_trace_path;
  ::setenv("AM_TRACE", "env.json", 1);
  CHECK(launch_trace_path({"prog", "1"}) == "env.json");
  CHECK(launch_trace_path({"prog", "--am-trace", "flag.json"}) == "flag.json");
  CHECK(launch_trace_path({"prog", "--am-trace=a.json", "--am-trace=b.json"}) == "b.json");
  CHECK(launch_trace_path({"prog", "--", "--am-trace=theirs.json"}) == "env.json");
  CHECK(launch_trace_path({"--am-trace=the-program-itself"}) == "env.json");
  ::unsetenv("AM_TRACE");
  CHECK(launch_trace_path({"prog"}).empty());
}

TEST_CASE("trace merge: garbage, a missing file and the output among the inputs are refused", "[unit][trace]") {
  const auto good = merge_scratch("good.json"), bad = merge_scratch("bad.json"), out = merge_scratch("out.json");
  write_small_trace(good, 1, "good", 1);
  std::ofstream(bad) << R"({"traceEvents": [{"ph": "X", "ts": 1,)";
  std::string text, err;
  CHECK(run_merge_cli({out, good, bad}, text, err) != 0);
  CHECK_THAT(err, Catch::Contains(bad + " is not a trace"));
  CHECK_FALSE(std::filesystem::exists(out));
  std::ofstream(bad) << R"({"events": []})";
  CHECK(run_merge_cli({out, good, bad}, text, err) != 0);
  CHECK_THAT(err, Catch::Contains("no \"traceEvents\" array"));
  CHECK(run_merge_cli({out, good, merge_scratch("missing.json")}, text, err) != 0);
  CHECK_THAT(err, Catch::Contains("missing.json"));
  CHECK(run_merge_cli({good, good}, text, err) != 0);
  CHECK_THAT(err, Catch::Contains("is also an input"));
  CHECK(run_merge_cli({out}, text, err) != 0); // no input at all
  std::filesystem::remove_all(std::filesystem::path(out).parent_path());
}
