#include "tools/trace_summary.hpp"

#include "actormesh/actors/errors.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <streambuf>
#include <tuple>
#include <zlib.h>

namespace am::tools {

namespace {

using json = nlohmann::json;

/// The deepest nesting read (an event's args hold a few levels; a deeper file is not a trace).
constexpr int max_depth = 64;

[[noreturn]] void refuse(const std::string& why) { throw value_error("trace: " + why); }

std::string where(std::size_t index) { return "event " + std::to_string(index); }

const json* member(const json& o, const char* key) {
  auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}

/// A number field (integer or not) that must be finite.
double number(const json& o, const char* key, std::size_t index, bool required, double fallback = 0) {
  const json* v = member(o, key);
  if (!v) {
    if (required)
      refuse(where(index) + " has no \"" + key + "\"");
    return fallback;
  }
  if (!v->is_number())
    refuse(where(index) + ": \"" + key + "\" must be a number");
  const double d = v->get<double>();
  if (!std::isfinite(d))
    refuse(where(index) + ": \"" + key + "\" must be finite");
  return d;
}

std::string text_field(const json& o, const char* key, std::size_t index) {
  const json* v = member(o, key);
  if (!v)
    return {};
  if (!v->is_string())
    refuse(where(index) + ": \"" + key + "\" must be a string");
  return v->get<std::string>();
}

/// args.<key> of an event, when there is one.
const json* arg(const json& o, const char* key) {
  const json* args = member(o, "args");
  return args && args->is_object() ? member(*args, key) : nullptr;
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


/// pid and tid: integers, strings of digits (some writers quote them), or names (PyTorch's
/// exports use "Spans", "stream 7"): each distinct name gets an id of its own past every number a
/// trace uses, and names its track unless metadata does.
class id_table {
public:
  std::int64_t id(const json& o, const char* key, std::size_t index) {
    const json* v = member(o, key);
    if (!v)
      return 0;
    if (v->is_number_integer() && !(v->is_number_unsigned() && v->get<std::uint64_t>() > max_number))
      return v->get<std::int64_t>();
    if (!v->is_string())
      refuse(where(index) + ": \"" + key + "\" must be an integer");
    const auto& text = v->get_ref<const std::string&>();
    if (!text.empty() && text.size() <= 18
        && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::stoll(text);
    auto [it, fresh] = ids_.emplace(text, first_named + static_cast<std::int64_t>(ids_.size()));
    if (fresh)
      names_[it->second] = text;
    return it->second;
  }
  /// The name behind an id that came from a name, or nothing.
  const std::string* name(std::int64_t id) const {
    auto it = names_.find(id);
    return it == names_.end() ? nullptr : &it->second;
  }

private:
  static constexpr std::uint64_t max_number = std::uint64_t{1} << 62;
  static constexpr std::int64_t first_named = std::int64_t{1} << 62;
  std::map<std::string, std::int64_t> ids_;
  std::map<std::int64_t, std::string> names_;
};

/// The summary built one event at a time, so that a trace is read as it streams in.
class event_reader {
public:
  void add(const json& e) {
    const std::size_t i = index_++;
    if (!e.is_object())
      refuse(where(i) + " is not an object");
    std::string ph = text_field(e, "ph", i);
    if (ph.empty())
      refuse(where(i) + " has no \"ph\"");
    auto pid = ids_.id(e, "pid", i);
    auto tid = ids_.id(e, "tid", i);
    std::string name = text_field(e, "name", i);
    if (ph == "M") {
      const json* n = arg(e, "name");
      if (n && n->is_string()) {
        if (name == "process_name")
          process_names_[pid] = n->get<std::string>();
        else if (name == "thread_name")
          tracks_[{pid, tid}].thread_name = n->get<std::string>();
      }
      return;
    }
    if (ph == "C")
      return; // a counter sample (queue depths, bytes in flight): a track of values, not of spans
    double ts = number(e, "ts", i, true);
    auto& t = tracks_[{pid, tid}];
    if (ph == "X") {
      double dur = number(e, "dur", i, false);
      if (dur < 0)
        refuse(where(i) + " (\"" + name + "\") has a negative duration");
      if (!std::isfinite(ts + dur))
        refuse(where(i) + " (\"" + name + "\") ends past the largest time");
      t.summary.bars.push_back({{ts, ts + dur}, std::move(name), 0});
      extend(ts, ts + dur);
    } else if (ph == "B") {
      t.open.emplace_back(ts, std::move(name));
      extend(ts, ts);
    } else if (ph == "E") {
      if (t.open.empty())
        refuse(where(i) + ": an \"E\" event with no \"B\" open on its track (pid " + std::to_string(pid) + " tid "
               + std::to_string(tid) + ")");
      auto [start, begun] = std::move(t.open.back());
      t.open.pop_back();
      if (ts < start)
        refuse(where(i) + ": an \"E\" event before its \"B\"");
      t.summary.bars.push_back({{start, ts}, std::move(begun), 0});
      extend(start, ts);
    } else if (ph == "i" || ph == "I" || ph == "n") {
      ++t.summary.instants;
      extend(ts, ts);
      if (name == "stall" || name == "resume") {
        const json* c = arg(e, "caller");
        lanes_[{pid, tid}].emplace_back(ts, name == "stall", c && c->is_number_integer() ? c->get<std::int64_t>() : -1);
      }
      t.summary.marks.emplace_back(ts, std::move(name));
    } else {
      // Counters, flows, async and object events: read (their fields are checked) but not drawn.
      extend(ts, ts);
    }
    ++out_.events;
  }

  trace_summary finish() {
    for (auto& [key, t] : tracks_) {
      auto& s = t.summary;
      s.pid = key.first;
      s.tid = key.second;
      s.name = track_name(key, t.thread_name);
      // "B" events the trace ends inside last to its end.
      for (auto& [start, begun] : t.open)
        s.bars.push_back({{start, std::max(start, out_.span.end_us)}, begun, 0});
      std::stable_sort(s.bars.begin(), s.bars.end(), [](auto& a, auto& b) {
        return a.when.start_us != b.when.start_us ? a.when.start_us < b.when.start_us : a.when.end_us > b.when.end_us;
      });
      std::stable_sort(s.marks.begin(), s.marks.end(), [](auto& a, auto& b) { return a.first < b.first; });
      s.spans = s.bars.size();
      assign_depths(s.bars);
      measure(s);
      if (auto l = lanes_.find(key); l != lanes_.end()) {
        std::stable_sort(l->second.begin(), l->second.end(),
                         [](auto& a, auto& b) { return std::get<0>(a) < std::get<0>(b); });
        pair_stalls(s, l->second, out_.span.end_us);
      }
      if (s.spans == 0 && s.instants == 0)
        continue; // a track named by metadata only
      for (auto& b : s.bars) {
        auto& n = by_name_[b.name];
        ++n.count;
        n.total_us += b.when.length_us();
        n.max_us = std::max(n.max_us, b.when.length_us());
      }
      out_.tracks.push_back(std::move(s));
    }
    for (auto& [name, n] : by_name_) {
      n.name = name;
      out_.names.push_back(std::move(n));
    }
    std::stable_sort(out_.names.begin(), out_.names.end(),
                     [](auto& a, auto& b) { return a.total_us > b.total_us; });
    return std::move(out_);
  }

private:
  void extend(double from, double to) {
    out_.span.start_us = any_ ? std::min(out_.span.start_us, from) : from;
    out_.span.end_us = any_ ? std::max(out_.span.end_us, to) : to;
    any_ = true;
  }

  // "process / thread": the metadata's names, else the names the ids came from, else the numbers.
  std::string track_name(std::pair<std::int64_t, std::int64_t> key, const std::string& thread_name) const {
    std::string process;
    if (auto pn = process_names_.find(key.first); pn != process_names_.end())
      process = pn->second;
    else if (auto* named = ids_.name(key.first))
      process = *named;
    else
      process = "pid " + std::to_string(key.first);
    if (!thread_name.empty())
      return process + " / " + thread_name;
    if (auto* named = ids_.name(key.second))
      return process + " / " + *named;
    return process + " / tid " + std::to_string(key.second);
  }

  std::size_t index_ = 0;
  id_table ids_;
  std::map<std::pair<std::int64_t, std::int64_t>, track_state> tracks_;
  std::map<std::int64_t, std::string> process_names_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::tuple<double, bool, std::int64_t>>> lanes_;
  std::map<std::string, trace_name_summary> by_name_;
  trace_summary out_;
  bool any_ = false;
};

/// Reads the trace event JSON from `in` one event at a time: each event is handed to the reader
/// when its object closes and then dropped, so memory holds one event and the summary, not the file.
template <class Input>
trace_summary read_trace(Input&& in) {
  event_reader reader;
  bool root_is_array = false, in_events = false, saw_events = false, root_seen = false;
  std::string key; // the root object's current key
  json::parser_callback_t take = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
    using ev = json::parse_event_t;
    const bool opens = event == ev::object_start || event == ev::array_start;
    if (opens && depth > max_depth)
      refuse("nested deeper than " + std::to_string(max_depth) + " levels");
    if (depth == 0 && opens && !root_seen) {
      root_seen = true;
      root_is_array = in_events = event == ev::array_start;
      return true;
    }
    const int event_depth = root_is_array ? 1 : 2;
    if (!root_is_array && depth == 1) {
      if (event == ev::key)
        key = parsed.get<std::string>();
      else if (event == ev::array_start && key == "traceEvents")
        in_events = saw_events = true;
      else if (event == ev::array_end)
        in_events = false;
      else if (event == ev::object_end || event == ev::value)
        return key != "traceEvents"; // not an array; refused below
    }
    if (in_events && depth == event_depth && (event == ev::object_end || event == ev::value || event == ev::array_end)) {
      reader.add(parsed);
      return false; // read: not kept in the document
    }
    return true;
  };
  try {
    json rest = json::parse(std::forward<Input>(in), take); // what is left: the root without its events
    (void)rest;
  } catch (const json::parse_error& e) {
    refuse(std::string("not valid JSON (") + e.what() + ")");
  }
  if (!root_is_array && !saw_events)
    refuse("expected {\"traceEvents\": [...]} or an array of events");
  return reader.finish();
}

/// A std::streambuf reading a gzip file through zlib, so that a .json.gz trace streams into the
/// parser without being inflated whole.
class gzip_input : public std::streambuf {
public:
  explicit gzip_input(const std::string& path) : file_(::gzopen(path.c_str(), "rb")) {
    if (!file_)
      throw value_error("trace: cannot read '" + path + "': " + std::strerror(errno));
    ::gzbuffer(file_, 1 << 17);
  }
  ~gzip_input() override { ::gzclose(file_); }
  gzip_input(const gzip_input&) = delete;
  gzip_input& operator=(const gzip_input&) = delete;

protected:
  int_type underflow() override {
    const int got = ::gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
    if (got < 0) {
      int code = 0;
      refuse(std::string("not a readable gzip file (") + ::gzerror(file_, &code) + ")");
    }
    if (got == 0)
      return traits_type::eof();
    setg(buffer_.data(), buffer_.data(), buffer_.data() + got);
    return traits_type::to_int_type(buffer_[0]);
  }

private:
  gzFile file_;
  std::array<char, 1 << 17> buffer_{};
};

/// Whether the file starts with gzip's magic bytes.
bool is_gzip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[2] = {};
  return in.read(magic, 2) && static_cast<unsigned char>(magic[0]) == 0x1f && static_cast<unsigned char>(magic[1]) == 0x8b;
}

} // namespace

trace_summary summarize_trace(std::string_view text) { return read_trace(text); }

trace_summary summarize_trace_file(const std::string& path) {
  if (std::filesystem::is_directory(path))
    throw value_error("trace: cannot read '" + path + "' (not a regular file)");
  try {
    if (is_gzip(path)) {
      gzip_input inflated(path);
      std::istream in(&inflated);
      return read_trace(in);
    }
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw value_error("trace: cannot read '" + path + "': " + std::strerror(errno));
    return read_trace(in);
  } catch (const value_error& e) {
    const std::string what = e.what();
    if (what.find("cannot read '") != std::string::npos)
      throw;
    throw value_error(what + " in '" + path + "'");
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

void print_trace_summary(std::ostream& out, const trace_summary& s, std::size_t top, std::size_t names) {
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
  double all_spans = 0;
  for (auto& n : s.names)
    all_spans += n.total_us;
  fmt::print(out, "spans by name, longest total first ({} names):\n", s.names.size());
  fmt::print(out, "  {:<40} {:>9} {:>13} {:>7} {:>13} {:>13}\n", "name", "count", "total", "total%", "mean", "max");
  for (std::size_t i = 0; i < s.names.size() && i < names; ++i) {
    auto& n = s.names[i];
    std::string name = n.name.size() > 40 ? n.name.substr(0, 37) + "..." : n.name;
    fmt::print(out, "  {:<40} {:>9} {:>13} {:>6.1f}% {:>13} {:>13}\n", name, n.count, format_duration(n.total_us),
               all_spans > 0 ? 100.0 * n.total_us / all_spans : 0.0, format_duration(n.mean_us()),
               format_duration(n.max_us));
  }
  if (s.names.size() > names)
    fmt::print(out, "  ... and {} more (--names)\n", s.names.size() - names);
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
