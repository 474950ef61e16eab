#include "tools/launch_trace.hpp"

#include "observability/trace_session.hpp"
#include "observability/trace_writer.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

namespace am::tools {

namespace {

using json = nlohmann::json;

/// The most runtimes of one program whose numbered traces the launcher looks for.
constexpr int max_numbered_runtimes = 64;

/// An event's "ts" when it has a numeric one.
const json* timestamp(const json& event) {
  if (!event.is_object())
    return nullptr;
  auto it = event.find("ts");
  return it != event.end() && it->is_number() ? &*it : nullptr;
}

/// An event's integer "pid", when it has one.
const json* integer_pid(const json& event) {
  if (!event.is_object())
    return nullptr;
  auto it = event.find("pid");
  return it != event.end() && it->is_number_integer() ? &*it : nullptr;
}

/// Gives the flow event `e` ("s", "t" or "f") of a file whose pids were renumbered a new id, the
/// same for every event of that file with its old id, so that its arrows stay paired and cannot
/// join an earlier file's arrows of the same id (two runs of one program repeat their ids).
void rename_flow(json& e, std::int64_t salt) {
  auto ph = e.find("ph");
  if (ph == e.end() || !ph->is_string())
    return;
  const auto& phase = ph->get_ref<const std::string&>();
  if (phase != "s" && phase != "t" && phase != "f")
    return;
  auto id = e.find("id");
  if (id == e.end())
    return;
  std::uint64_t old = 0;
  if (id->is_number_unsigned() || id->is_number_integer())
    old = id->get<std::uint64_t>();
  else if (id->is_string())
    old = std::strtoull(id->get_ref<const std::string&>().c_str(), nullptr, 16); // "0x.." or bare hex
  else
    return;
  *id = observability::flow_id_text(observability::flow_id_in_file(old, salt));
}

/// The rank files of processes first .. first + processes - 1 for the trace file `base`.
std::vector<std::string> rank_files(const std::string& base, int first, int processes, int world) {
  std::vector<std::string> out;
  for (int p = first; p < first + processes; ++p)
    out.push_back(observability::trace_file_of(base, p, world));
  return out;
}

} // namespace

std::string merge_trace_files(const std::vector<std::string>& inputs, const std::string& output, after_merge then,
                              std::ostream& notes) {
  json::array_t events;
  json::array_t processes;
  std::set<std::int64_t> taken; // pids of the inputs merged so far
  for (auto& path : inputs) {
    std::ifstream f(path, std::ios::binary);
    if (!f)
      return "cannot read " + path;
    json root;
    try {
      root = json::parse(f);
    } catch (const std::exception& e) {
      return path + " is not a trace: " + e.what();
    }
    if (!root.is_object() || !root.contains("traceEvents") || !root["traceEvents"].is_array())
      return path + " is not a trace: no \"traceEvents\" array";
    auto& own = root["traceEvents"];
    std::set<std::int64_t> pids;
    for (auto& e : own)
      if (const json* pid = integer_pid(e))
        pids.insert(pid->get<std::int64_t>());
    // A pid an earlier file took gets the next one that neither uses.
    std::map<std::int64_t, std::int64_t> renamed;
    std::int64_t next_free = std::max(taken.empty() ? 0 : *taken.rbegin(), pids.empty() ? 0 : *pids.rbegin()) + 1;
    for (auto pid : pids)
      if (taken.count(pid) > 0) {
        renamed[pid] = next_free;
        notes << "trace merge: " << path << ": its pid " << pid << " is pid " << next_free
              << " in the merged trace (an earlier file has pid " << pid << ")\n";
        ++next_free;
      }
    for (auto& e : own) {
      if (const json* pid = integer_pid(e))
        if (auto it = renamed.find(pid->get<std::int64_t>()); it != renamed.end())
          e["pid"] = it->second;
      if (!renamed.empty())
        rename_flow(e, renamed.begin()->second);
      events.push_back(std::move(e));
    }
    for (auto pid : pids)
      taken.insert(renamed.count(pid) > 0 ? renamed[pid] : pid);
    if (auto it = root.find("otherData"); it != root.end())
      processes.push_back(std::move(*it));
  }
  // Events of a process that started before process 0 have negative times: shift all to >= 0.
  double earliest = std::numeric_limits<double>::infinity();
  for (auto& e : events)
    if (const json* ts = timestamp(e))
      earliest = std::min(earliest, ts->get<double>());
  if (earliest < 0)
    for (auto& e : events)
      if (const json* ts = timestamp(e))
        e["ts"] = ts->get<double>() - earliest;
  json other = json::object();
  other["actormesh_trace"] = 1;
  other["processes"] = static_cast<std::int64_t>(taken.size());
  other["merged_from"] = std::move(processes);
  other["shifted_us"] = earliest < 0 ? -earliest : 0.0;
  json top = json::object();
  top["traceEvents"] = std::move(events);
  top["displayTimeUnit"] = "ns";
  top["otherData"] = std::move(other);
  // Names a process wrote that are not UTF-8 are replaced, not a reason to lose the trace.
  auto why = observability::write_text_file(output, top.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
  if (!why.empty())
    return "cannot write " + output + ": " + why;
  if (then == after_merge::remove_inputs)
    for (auto& path : inputs) {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  return "";
}

std::string launch_trace_path(const std::vector<std::string>& command) {
  const std::string flag = "--am-trace";
  std::string from_flag;
  bool flagged = false;
  for (std::size_t i = 1; i < command.size(); ++i) {
    if (command[i] == "--")
      break;
    if (command[i] == flag && i + 1 < command.size()) {
      from_flag = command[++i];
      flagged = true;
    } else if (command[i].rfind(flag + "=", 0) == 0) {
      from_flag = command[i].substr(flag.size() + 1);
      flagged = true;
    }
  }
  if (flagged)
    return from_flag;
  const char* env = std::getenv("AM_TRACE");
  return env != nullptr ? env : "";
}

void remove_stale_launch_traces(const std::string& path, int first, int processes, int world) {
  if (path.empty() || world <= 1)
    return;
  for (int runtime = 1; runtime <= max_numbered_runtimes; ++runtime)
    for (auto& file : rank_files(observability::numbered_trace_path(path, runtime), first, processes, world)) {
      std::error_code ignored;
      std::filesystem::remove(file, ignored);
    }
}

void merge_launch_traces(const std::string& path, int first, int processes, int world, std::ostream& err) {
  if (path.empty() || world <= 1)
    return;
  for (int runtime = 1; runtime <= max_numbered_runtimes; ++runtime) {
    const std::string base = observability::numbered_trace_path(path, runtime);
    std::vector<std::string> inputs;
    for (auto& file : rank_files(base, first, processes, world))
      if (std::filesystem::exists(file))
        inputs.push_back(file);
    if (inputs.empty()) {
      if (runtime == 1)
        err << "actormesh launch: the trace " << path << " was asked for but no process wrote one (" << path
            << ".rank<i>)\n";
      continue;
    }
    if (auto why = merge_trace_files(inputs, base, after_merge::remove_inputs, err); !why.empty()) {
      err << "actormesh launch: the traces were not merged: " << why << "\n";
      continue;
    }
    if (static_cast<int>(inputs.size()) < processes)
      err << "actormesh launch: trace " << base << " merged from " << inputs.size() << " of " << processes
          << " processes (the others wrote none)\n";
  }
}

} // namespace am::tools
