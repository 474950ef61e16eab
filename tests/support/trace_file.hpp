// Reading a trace file in tests: parse it (nlohmann's JSON), check it is what Perfetto
// and chrome://tracing accept (the trace event format, well nested per track) and count its events.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

namespace am::testing {

/// A path in the temporary folder unique to this test process: am_trace_<pid>_<name>.
inline std::string trace_temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("am_trace_" + std::to_string(::getpid()) + "_" + name)).string();
}

/// One event of a trace as read back.
struct read_event {
  std::string name, cat, ph;
  double ts = 0, dur = 0;
  std::int64_t pid = 0, tid = 0;
  nlohmann::json args;
  std::string id;        ///< a flow event's id ("s", "t", "f")
  bool binds_enclosing = false; ///< a flow end with "bp": "e"
};

/// A trace as read back: its events (metadata apart), track names and otherData.
struct read_trace {
  std::vector<read_event> events;                           ///< X and i events
  std::vector<read_event> counters;                         ///< C events (counter samples)
  std::vector<read_event> flows;                            ///< s, t and f events (arrows)
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> track_names; ///< (pid, tid) -> name
  std::map<std::int64_t, std::string> process_names;
  nlohmann::json other;                                     ///< otherData, or several merged
  std::string nesting_error;                                ///< "" when every track is well nested

  /// Events whose category is `cat` and (unless empty) name `name`, optionally of process `pid`.
  std::size_t count(const std::string& cat, const std::string& name = "", std::int64_t pid = -1) const {
    return static_cast<std::size_t>(std::count_if(events.begin(), events.end(), [&](const read_event& e) {
      return e.cat == cat && (name.empty() || e.name == name) && (pid < 0 || e.pid == pid);
    }));
  }
  /// The tracks (pid, tid) that events of category `cat` sit on.
  std::set<std::pair<std::int64_t, std::int64_t>> tracks_of(const std::string& cat) const {
    std::set<std::pair<std::int64_t, std::int64_t>> out;
    for (auto& e : events)
      if (e.cat == cat)
        out.insert({e.pid, e.tid});
    return out;
  }
};

inline double number_of(const nlohmann::json& j, const char* what) {
  if (!j.is_number())
    throw std::runtime_error(std::string(what) + " is not a number");
  return j.get<double>();
}

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw std::runtime_error("cannot open " + path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// "" when the X events of every track nest (sorted by start, each ends no later than the one it
/// starts in), else the first pair that overlaps.
inline std::string check_nesting(const std::vector<read_event>& events) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const read_event*>> by_track;
  for (auto& e : events)
    if (e.ph == "X")
      by_track[{e.pid, e.tid}].push_back(&e);
  constexpr double eps = 0.0005; // a thousandth of a microsecond is the file's resolution
  for (auto& [track, list] : by_track) {
    std::stable_sort(list.begin(), list.end(), [](auto* a, auto* b) {
      return a->ts != b->ts ? a->ts < b->ts : a->dur > b->dur;
    });
    std::vector<const read_event*> open;
    for (auto* e : list) {
      while (!open.empty() && open.back()->ts + open.back()->dur <= e->ts + eps)
        open.pop_back();
      if (!open.empty() && e->ts + e->dur > open.back()->ts + open.back()->dur + eps)
        return "pid " + std::to_string(track.first) + " tid " + std::to_string(track.second) + ": '" + e->name
               + "' at " + std::to_string(e->ts) + " overlaps '" + open.back()->name + "' at "
               + std::to_string(open.back()->ts);
      open.push_back(e);
    }
  }
  return "";
}

/// The X event on track (pid, tid) that encloses time `ts` most closely (the shortest), or null.
inline const read_event* enclosing_span(const std::vector<read_event>& events, std::int64_t pid, std::int64_t tid,
                                        double ts) {
  const read_event* best = nullptr;
  for (auto& e : events)
    if (e.ph == "X" && e.pid == pid && e.tid == tid && e.ts <= ts && ts <= e.ts + e.dur
        && (best == nullptr || e.dur < best->dur))
      best = &e;
  return best;
}

/// Parses and checks a trace file; throws std::runtime_error / am::value_error on a malformed one.
inline read_trace read_trace_file(const std::string& path) {
  using json = nlohmann::json;
  const json top = json::parse(read_text(path)); // throws json::exception on a malformed one
  if (top.at("displayTimeUnit").get<std::string>() != "ns")
    throw std::runtime_error("displayTimeUnit is not ns");
  read_trace out;
  if (auto it = top.find("otherData"); it != top.end())
    out.other = *it;
  for (auto& o : top.at("traceEvents")) {
    read_event e;
    e.name = o.at("name").get<std::string>();
    e.ph = o.at("ph").get<std::string>();
    e.pid = o.at("pid").get<std::int64_t>();
    e.tid = e.ph == "C" ? o.value("tid", std::int64_t{0}) : o.at("tid").get<std::int64_t>();
    if (auto a = o.find("args"); a != o.end())
      e.args = *a;
    if (e.ph == "C") { // a counter sample: a time and numeric series values, on no thread's track
      e.ts = number_of(o.at("ts"), "ts");
      if (!e.args.is_object() || e.args.empty())
        throw std::runtime_error("counter " + e.name + " has no values");
      for (auto& [key, value] : e.args.items())
        if (!value.is_number())
          throw std::runtime_error("counter " + e.name + ": " + key + " is not a number");
      out.counters.push_back(std::move(e));
      continue;
    }
    if (e.ph == "M") {
      if (e.name == "thread_name")
        out.track_names[{e.pid, e.tid}] = e.args.at("name").get<std::string>();
      else if (e.name == "process_name")
        out.process_names[e.pid] = e.args.at("name").get<std::string>();
      continue;
    }
    if (e.ph == "s" || e.ph == "t" || e.ph == "f") { // an arrow's end: an id, on a thread's track
      const auto& id = o.at("id");
      e.id = id.is_string() ? id.get<std::string>() : id.dump();
      e.cat = o.at("cat").get<std::string>();
      e.ts = number_of(o.at("ts"), "ts");
      e.binds_enclosing = o.value("bp", std::string()) == "e";
      out.flows.push_back(std::move(e));
      continue;
    }
    if (e.ph != "X" && e.ph != "i")
      throw std::runtime_error("unexpected phase " + e.ph);
    e.cat = o.at("cat").get<std::string>();
    e.ts = number_of(o.at("ts"), "ts");
    if (e.ph == "X") {
      e.dur = number_of(o.at("dur"), "dur");
      if (e.dur < 0)
        throw std::runtime_error("negative dur");
    }
    out.events.push_back(std::move(e));
  }
  for (auto& e : out.events)
    if (!out.track_names.count({e.pid, e.tid}))
      throw std::runtime_error("track " + std::to_string(e.tid) + " of process " + std::to_string(e.pid)
                               + " has no thread_name");
  out.nesting_error = check_nesting(out.events);
  return out;
}

} // namespace am::testing
