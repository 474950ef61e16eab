#include "observability/trace_writer.hpp"

#include "actormesh/actors/errors.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace am::observability {

namespace {

/// The length of the valid UTF-8 sequence at the start of `s`, or 0 when it is not one.
std::size_t utf8_length(std::string_view s) {
  const auto c = static_cast<unsigned char>(s[0]);
  std::size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (n == 0 || s.size() < n)
    return 0;
  for (std::size_t i = 1; i < n; ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80)
      return 0;
  return n;
}

/// `s` as a JSON string: quotes, backslashes and control characters escaped, and every byte that
/// is not part of valid UTF-8 replaced by U+FFFD, so that strict readers accept any name.
void append_escaped(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += s[i++];
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      ++i;
    } else if (c < 0x80) {
      out += s[i++];
    } else if (const auto n = utf8_length(s.substr(i)); n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xef\xbf\xbd"; // U+FFFD
      ++i;
    }
  }
  out += '"';
}

/// Microseconds with three decimals, exact for whole nanoseconds.
void append_us(std::string& out, std::int64_t ns) {
  char buf[40];
  const bool negative = ns < 0;
  const auto magnitude = static_cast<unsigned long long>(negative ? -ns : ns);
  std::snprintf(buf, sizeof buf, "%s%llu.%03llu", negative ? "-" : "", magnitude / 1000, magnitude % 1000);
  out += buf;
}

struct placed {
  const collected_event* ev;
  std::int64_t ts;  ///< on process 0's clock, from the origin
  std::uint32_t tid;
};

/// Puts every complete event of one track on the first of its sibling tracks where it nests.
void nest(std::vector<placed>& track_events) {
  std::stable_sort(track_events.begin(), track_events.end(), [](const placed& a, const placed& b) {
    if (a.ts != b.ts)
      return a.ts < b.ts;
    return a.ev->e.dur_ns > b.ev->e.dur_ns; // the longer one encloses
  });
  std::vector<std::vector<std::int64_t>> stacks; // per sibling: the ends of the open events
  for (auto& p : track_events) {
    if (p.ev->e.dur_ns < 0)
      continue; // instants never break nesting
    const std::int64_t end = p.ts + p.ev->e.dur_ns;
    std::uint32_t k = 0;
    for (;; ++k) {
      if (k == stacks.size())
        stacks.emplace_back();
      auto& open = stacks[k];
      while (!open.empty() && open.back() <= p.ts)
        open.pop_back();
      if (open.empty() || open.back() >= end) {
        open.push_back(end);
        break;
      }
    }
    if (k > 0)
      p.tid = overlap_track(p.tid, k);
  }
}

/// The flow event ("s" at the arrow's start, "f" bound to its enclosing slice at the end) of the
/// complete event `p`, placed in the middle of it so that the slice encloses it.
void append_flow(std::string& out, const placed& p, const std::string& pid, int pid_number) {
  const auto& e = p.ev->e;
  out += e.flow_end ? "{\"name\":\"call\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":\""
                    : "{\"name\":\"call\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":\"";
  out += flow_id_text(flow_id_in_file(e.flow, pid_number));
  out += "\",\"ts\":";
  append_us(out, p.ts + e.dur_ns / 2);
  out += ",\"pid\":" + pid + ",\"tid\":" + std::to_string(p.tid) + "}";
}

} // namespace

std::uint64_t flow_id_in_file(std::uint64_t id, std::int64_t salt) noexcept {
  std::uint64_t x = id ^ (static_cast<std::uint64_t>(salt) * 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
  x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

std::string flow_id_text(std::uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(id));
  return buf;
}

std::string trace_json(const collected_trace& trace, const trace_process_info& info) {
  std::map<std::uint32_t, std::vector<placed>> by_track;
  std::vector<placed> counters;
  for (auto& ev : trace.events) {
    const placed p{&ev, ev.e.start_ns + info.offset_ns - info.origin_ns, ev.e.track};
    if (ev.e.counter)
      counters.push_back(p);
    else
      by_track[ev.e.track].push_back(p);
  }
  std::map<std::uint32_t, std::string> names(trace.track_names.begin(), trace.track_names.end());
  std::string out;
  out.reserve(trace.events.size() * 160 + 4096);
  out += "{\"traceEvents\":[\n";
  bool first = true;
  auto begin_event = [&] {
    if (!first)
      out += ",\n";
    first = false;
  };
  // Perfetto's advice: pid 0 is the kernel's, so process i is pid i + 1, named "process i".
  const std::string pid = std::to_string(trace_pid_of(info.process));
  const std::string process = std::to_string(info.process);
  begin_event();
  out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":0,\"args\":{\"name\":";
  append_escaped(out, "process " + process);
  out += "}}";
  begin_event();
  out += "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":0,\"args\":{\"sort_index\":"
         + process + "}}";
  // Counter samples: one counter track per name in the process, its series named by the argument.
  for (auto& p : counters) {
    begin_event();
    out += "{\"name\":";
    append_escaped(out, p.ev->name);
    out += ",\"ph\":\"C\",\"ts\":";
    append_us(out, p.ts);
    out += ",\"pid\":" + pid + ",\"args\":{";
    append_escaped(out, p.ev->e.a_key != nullptr ? p.ev->e.a_key : "value");
    out += ':' + std::to_string(p.ev->e.a) + "}}";
  }
  std::set<std::uint32_t> tids;
  for (auto& [id, events] : by_track) {
    nest(events);
    for (auto& p : events) {
      tids.insert(p.tid);
      const auto& e = p.ev->e;
      begin_event();
      out += "{\"name\":";
      append_escaped(out, p.ev->name);
      out += ",\"cat\":";
      append_escaped(out, e.category != nullptr ? e.category : "");
      out += e.dur_ns < 0 ? ",\"ph\":\"i\",\"s\":\"t\",\"ts\":" : ",\"ph\":\"X\",\"ts\":";
      append_us(out, p.ts);
      if (e.dur_ns >= 0) {
        out += ",\"dur\":";
        append_us(out, e.dur_ns);
      }
      out += ",\"pid\":" + pid + ",\"tid\":" + std::to_string(p.tid) + ",\"args\":{";
      bool first_arg = true;
      auto arg_sep = [&] {
        if (!first_arg)
          out += ',';
        first_arg = false;
      };
      if (!p.ev->text.empty()) {
        arg_sep();
        out += "\"detail\":";
        append_escaped(out, p.ev->text);
      }
      for (auto [key, value] : {std::pair{e.a_key, e.a}, std::pair{e.b_key, e.b}, std::pair{e.c_key, e.c}}) {
        if (key == nullptr)
          continue;
        arg_sep();
        append_escaped(out, key);
        out += ':' + std::to_string(value);
      }
      out += "}}";
      if (e.flow != 0 && e.dur_ns >= 0) {
        begin_event();
        append_flow(out, p, pid, trace_pid_of(info.process));
      }
    }
  }
  for (auto tid : tids) {
    const std::uint32_t base = tid % 1000000u;
    const std::uint32_t k = tid / 1000000u;
    auto it = names.find(base);
    std::string name = it != names.end() ? it->second : "track " + std::to_string(base);
    if (k > 0)
      name += " (overlap " + std::to_string(k) + ")";
    begin_event();
    out += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":" + std::to_string(tid)
           + ",\"args\":{\"name\":";
    append_escaped(out, name);
    out += "}}";
    begin_event();
    out += "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":" + std::to_string(tid)
           + ",\"args\":{\"sort_index\":" + std::to_string(tid) + "}}";
  }
  out += "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"actormesh_trace\":1,\"process\":" + process
         + ",\"processes\":" + std::to_string(info.processes) + ",\"events\":" + std::to_string(trace.events.size())
         + ",\"dropped_events\":" + std::to_string(trace.dropped) + ",\"overwritten_events\":"
         + std::to_string(trace.overwritten) + ",\"clock_offset_ns\":"
         + std::to_string(info.offset_ns) + ",\"clock_rtt_ns\":" + std::to_string(info.rtt_ns) + ",\"clock\":";
  append_escaped(out, info.clock_note);
  out += "}}\n";
  return out;
}

std::string write_text_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(temporary, std::ios::binary | std::ios::trunc);
    if (!f)
      return std::string(std::strerror(errno));
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    f.close();
    if (!f) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      return "writing failed (disk full?)";
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    return ec.message();
  }
  return "";
}

void check_trace_path(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  auto refuse = [&](const std::string& why) {
    throw value_error(what + ": cannot write the trace to '" + path + "': " + why);
  };
  if (path.empty())
    refuse("the path is empty");
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec))
    refuse("it is a directory");
  const fs::path folder = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec))
    refuse("the folder '" + folder.string() + "' does not exist");
  if (::access(folder.c_str(), W_OK) != 0)
    refuse("the folder '" + folder.string() + "' is not writable (" + std::strerror(errno) + ")");
  if (fs::exists(p, ec) && ::access(p.c_str(), W_OK) != 0)
    refuse(std::string("the file is not writable (") + std::strerror(errno) + ")");
}

} // namespace am::observability
