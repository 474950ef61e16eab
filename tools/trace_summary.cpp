#include "tools/trace_summary.hpp"

#include "actors/errors.hpp"
#include "multihost/detail/json.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <ostream>

namespace am::tools {

namespace {

using detail::json;

[[noreturn]] void refuse(const std::string& why) { throw value_error("trace: " + why); }

std::string where(std::size_t index) { return "event " + std::to_string(index); }

const json* member(const json::object_t& o, const char* key) {
  auto it = o.find(key);
  return it == o.end() ? nullptr : &it->second;
}

/// A number field (integer or not) that must be finite.
double number(const json::object_t& o, const char* key, std::size_t index, bool required, double fallback = 0) {
  const json* v = member(o, key);
  if (!v) {
    if (required)
      refuse(where(index) + " has no \"" + key + "\"");
    return fallback;
  }
  double d;
  if (auto* i = std::get_if<std::int64_t>(&v->value))
    d = static_cast<double>(*i);
  else if (auto* f = std::get_if<double>(&v->value))
    d = *f;
  else
    refuse(where(index) + ": \"" + key + "\" must be a number");
  if (!std::isfinite(d))
    refuse(where(index) + ": \"" + key + "\" must be finite");
  return d;
}

/// pid and tid: integers (a string of digits is accepted too, as some writers quote them).
std::int64_t id_field(const json::object_t& o, const char* key, std::size_t index) {
  const json* v = member(o, key);
  if (!v)
    return 0;
  if (auto* i = std::get_if<std::int64_t>(&v->value))
    return *i;
  if (auto* s = std::get_if<std::string>(&v->value)) {
    std::int64_t r = 0;
    if (s->empty() || s->size() > 18 || !std::all_of(s->begin(), s->end(), [](char c) { return c >= '0' && c <= '9'; }))
      refuse(where(index) + ": \"" + key + "\" must be an integer");
    for (char c : *s)
      r = r * 10 + (c - '0');
    return r;
  }
  refuse(where(index) + ": \"" + key + "\" must be an integer");
}

std::string text_field(const json::object_t& o, const char* key, std::size_t index) {
  const json* v = member(o, key);
  if (!v)
    return {};
  if (auto* s = std::get_if<std::string>(&v->value))
    return *s;
  refuse(where(index) + ": \"" + key + "\" must be a string");
}

/// args.<key> of an event when it is a string (metadata names) or an integer (callers).
const json* arg(const json::object_t& o, const char* key) {
  const json* args = member(o, "args");
  if (!args)
    return nullptr;
  auto* a = std::get_if<json::object_t>(&args->value);
  return a ? member(*a, key) : nullptr;
}

struct track_state {
  trace_track_summary summary;
  std::vector<std::pair<double, std::string>> open; ///< "B" events waiting for their "E"
  std::string process_name, thread_name;
};

/// Busy time and idle gaps from the bars (sorted by start).
void measure(trace_track_summary& t) {
  if (t.bars.empty())
    return;
  t.active = {t.bars.front().when.start_us, t.bars.front().when.end_us};
  trace_interval run = t.bars.front().when;
  for (auto& b : t.bars) {
    if (b.when.start_us > run.end_us) {
      t.busy_us += run.length_us();
      t.idle_gaps.push_back({run.end_us, b.when.start_us});
      run = b.when;
    } else {
      run.end_us = std::max(run.end_us, b.when.end_us);
    }
    t.active.end_us = std::max(t.active.end_us, b.when.end_us);
  }
  t.busy_us += run.length_us();
  t.idle_us = 0;
  for (auto& g : t.idle_gaps)
    t.idle_us += g.length_us();
}

/// Nesting depths: how many earlier spans of the track still enclose each span.
void assign_depths(std::vector<trace_bar>& bars) {
  std::vector<double> ends; // the open spans' ends, outermost first
  for (auto& b : bars) {
    while (!ends.empty() && ends.back() <= b.when.start_us)
      ends.pop_back();
    b.depth = static_cast<int>(ends.size());
    ends.push_back(b.when.end_us);
  }
}

/// Stall instants paired with the next resume of the same caller.
void pair_stalls(trace_track_summary& t, const std::vector<std::tuple<double, bool, std::int64_t>>& lane_events,
                 double trace_end) {
  std::map<std::int64_t, double> waiting;
  for (auto& [ts, stall, caller] : lane_events) {
    if (stall) {
      waiting.emplace(caller, ts); // a second stall before its resume keeps the first
    } else if (auto it = waiting.find(caller); it != waiting.end()) {
      t.stalls.push_back({{it->second, ts}, caller, true});
      waiting.erase(it);
    }
  }
  for (auto& [caller, ts] : waiting)
    t.stalls.push_back({{ts, std::max(ts, trace_end)}, caller, false});
  std::sort(t.stalls.begin(), t.stalls.end(), [](auto& a, auto& b) { return a.when.start_us < b.when.start_us; });
}

} // namespace

trace_summary summarize_trace(std::string_view text) {
  json root;
  try {
    root = json::parse(text);
  } catch (const value_error& e) {
    refuse(std::string("not valid JSON (") + e.what() + ")");
  }
  const json::array_t* events = std::get_if<json::array_t>(&root.value);
  if (!events) {
    auto* o = std::get_if<json::object_t>(&root.value);
    const json* list = o ? member(*o, "traceEvents") : nullptr;
    events = list ? std::get_if<json::array_t>(&list->value) : nullptr;
    if (!events)
      refuse("expected {\"traceEvents\": [...]} or an array of events");
  }
  std::map<std::pair<std::int64_t, std::int64_t>, track_state> tracks;
  std::map<std::int64_t, std::string> process_names;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::tuple<double, bool, std::int64_t>>> lanes;
  trace_summary out;
  bool any = false;
  auto extend = [&](double from, double to) {
    out.span.start_us = any ? std::min(out.span.start_us, from) : from;
    out.span.end_us = any ? std::max(out.span.end_us, to) : to;
    any = true;
  };
  for (std::size_t i = 0; i < events->size(); ++i) {
    auto* e = std::get_if<json::object_t>(&(*events)[i].value);
    if (!e)
      refuse(where(i) + " is not an object");
    std::string ph = text_field(*e, "ph", i);
    if (ph.empty())
      refuse(where(i) + " has no \"ph\"");
    auto pid = id_field(*e, "pid", i);
    auto tid = id_field(*e, "tid", i);
    std::string name = text_field(*e, "name", i);
    if (ph == "M") {
      const json* n = arg(*e, "name");
      auto* s = n ? std::get_if<std::string>(&n->value) : nullptr;
      if (name == "process_name" && s)
        process_names[pid] = *s;
      else if (name == "thread_name" && s)
        tracks[{pid, tid}].thread_name = *s;
      continue;
    }
    double ts = number(*e, "ts", i, true);
    auto& t = tracks[{pid, tid}];
    if (ph == "X") {
      double dur = number(*e, "dur", i, false);
      if (dur < 0)
        refuse(where(i) + " (\"" + name + "\") has a negative duration");
      if (!std::isfinite(ts + dur))
        refuse(where(i) + " (\"" + name + "\") ends past the largest time");
      t.summary.bars.push_back({{ts, ts + dur}, name, 0});
      extend(ts, ts + dur);
    } else if (ph == "B") {
      t.open.emplace_back(ts, name);
      extend(ts, ts);
    } else if (ph == "E") {
      if (t.open.empty())
        refuse(where(i) + ": an \"E\" event with no \"B\" open on its track (pid " + std::to_string(pid) + " tid "
               + std::to_string(tid) + ")");
      auto [start, begun] = t.open.back();
      t.open.pop_back();
      if (ts < start)
        refuse(where(i) + ": an \"E\" event before its \"B\"");
      t.summary.bars.push_back({{start, ts}, begun, 0});
      extend(start, ts);
    } else if (ph == "i" || ph == "I" || ph == "n") {
      ++t.summary.instants;
      t.summary.marks.emplace_back(ts, name);
      extend(ts, ts);
      if (name == "stall" || name == "resume") {
        const json* c = arg(*e, "caller");
        auto* ci = c ? std::get_if<std::int64_t>(&c->value) : nullptr;
        lanes[{pid, tid}].emplace_back(ts, name == "stall", ci ? *ci : -1);
      }
    } else {
      // Counters, flows, async and object events: read (their fields are checked) but not drawn.
      extend(ts, ts);
    }
    ++out.events;
  }
  for (auto& [key, t] : tracks) {
    auto& s = t.summary;
    s.pid = key.first;
    s.tid = key.second;
    auto pn = process_names.find(key.first);
    std::string process = pn != process_names.end() ? pn->second : "pid " + std::to_string(key.first);
    s.name = t.thread_name.empty() ? process + " / tid " + std::to_string(key.second) : process + " / " + t.thread_name;
    // "B" events the trace ends inside last to its end.
    for (auto& [start, begun] : t.open)
      s.bars.push_back({{start, std::max(start, out.span.end_us)}, begun, 0});
    std::stable_sort(s.bars.begin(), s.bars.end(), [](auto& a, auto& b) {
      return a.when.start_us != b.when.start_us ? a.when.start_us < b.when.start_us : a.when.end_us > b.when.end_us;
    });
    std::stable_sort(s.marks.begin(), s.marks.end(), [](auto& a, auto& b) { return a.first < b.first; });
    s.spans = s.bars.size();
    assign_depths(s.bars);
    measure(s);
    if (auto l = lanes.find(key); l != lanes.end()) {
      std::stable_sort(l->second.begin(), l->second.end(),
                       [](auto& a, auto& b) { return std::get<0>(a) < std::get<0>(b); });
      pair_stalls(s, l->second, out.span.end_us);
    }
    if (s.spans == 0 && s.instants == 0)
      continue; // a track named by metadata only
    out.tracks.push_back(std::move(s));
  }
  return out;
}

trace_summary summarize_trace_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw value_error("trace: cannot read '" + path + "': " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  auto size = static_cast<std::streamoff>(in.tellg());
  if (size < 0)
    throw value_error("trace: cannot read '" + path + "' (not a regular file)");
  if (static_cast<std::uint64_t>(size) > max_trace_bytes)
    throw value_error("trace: '" + path + "' has " + std::to_string(size) + " bytes, more than the "
                      + std::to_string(max_trace_bytes) + " `trace summary` reads");
  in.seekg(0);
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), size);
  if (in.gcount() != size)
    throw value_error("trace: cannot read '" + path + "': short read");
  try {
    return summarize_trace(text);
  } catch (const value_error& e) {
    throw value_error(std::string(e.what()) + " in '" + path + "'");
  }
}

std::string format_duration(double us) {
  double a = std::fabs(us);
  if (a < 1000)
    return fmt::format("{:.3f} us", us);
  if (a < 1e6)
    return fmt::format("{:.3f} ms", us / 1e3);
  return fmt::format("{:.3f} s", us / 1e6);
}

void print_trace_summary(std::ostream& out, const trace_summary& s, std::size_t top) {
  double span = s.span.length_us();
  fmt::print(out, "{} events on {} tracks over {} (from ts {:.3f} us)\n", s.events, s.tracks.size(),
             format_duration(span), s.span.start_us);
  fmt::print(out, "{:>4}  {:<40} {:>7} {:>13} {:>6} {:>6} {:>13} {:>13}\n", "lane", "track", "spans", "busy", "busy%",
             "gaps", "idle", "longest gap");
  struct gap_at {
    trace_interval when;
    std::size_t lane;
  };
  std::vector<gap_at> gaps;
  std::vector<std::pair<trace_stall, std::size_t>> stalls;
  for (std::size_t i = 0; i < s.tracks.size(); ++i) {
    auto& t = s.tracks[i];
    double longest = 0;
    for (auto& g : t.idle_gaps) {
      longest = std::max(longest, g.length_us());
      gaps.push_back({g, i});
    }
    for (auto& st : t.stalls)
      stalls.emplace_back(st, i);
    std::string name = t.name.size() > 40 ? t.name.substr(0, 37) + "..." : t.name;
    fmt::print(out, "{:>4}  {:<40} {:>7} {:>13} {:>5.1f}% {:>6} {:>13} {:>13}\n", i, name, t.spans,
               format_duration(t.busy_us), span > 0 ? 100.0 * t.busy_us / span : 0.0, t.idle_gaps.size(),
               format_duration(t.idle_us), format_duration(longest));
  }
  auto by_length = [](auto& a, auto& b) { return a.when.length_us() > b.when.length_us(); };
  std::stable_sort(gaps.begin(), gaps.end(), by_length);
  fmt::print(out, "longest idle gaps (between spans of one track):\n");
  if (gaps.empty())
    fmt::print(out, "  none\n");
  for (std::size_t i = 0; i < gaps.size() && i < top; ++i)
    fmt::print(out, "  {:>13}  lane {:<4} {} at +{}\n", format_duration(gaps[i].when.length_us()), gaps[i].lane,
               s.tracks[gaps[i].lane].name, format_duration(gaps[i].when.start_us - s.span.start_us));
  std::stable_sort(stalls.begin(), stalls.end(), [](auto& a, auto& b) { return a.first.when.length_us() > b.first.when.length_us(); });
  fmt::print(out, "longest stalls (a call waiting for an input: stall to resume):\n");
  if (stalls.empty())
    fmt::print(out, "  none\n");
  for (std::size_t i = 0; i < stalls.size() && i < top; ++i) {
    auto& [st, lane] = stalls[i];
    fmt::print(out, "  {:>13}  lane {:<4} {}{} at +{}{}\n", format_duration(st.when.length_us()), lane,
               s.tracks[lane].name, st.caller >= 0 ? fmt::format(" caller {}", st.caller) : std::string(),
               format_duration(st.when.start_us - s.span.start_us), st.resumed ? "" : " (no resume before the end)");
  }
}

} // namespace am::tools
