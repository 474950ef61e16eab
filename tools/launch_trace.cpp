#include "tools/launch_trace.hpp"

#include "observability/trace_session.hpp"
#include "observability/trace_writer.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

namespace am::tools {

namespace {

using json = nlohmann::json;

/// An event's "ts" when it has a numeric one.
const json* timestamp(const json& event) {
  if (!event.is_object())
    return nullptr;
  auto it = event.find("ts");
  return it != event.end() && it->is_number() ? &*it : nullptr;
}

} // namespace

std::string merge_trace_files(const std::vector<std::string>& inputs, const std::string& output) {
  json::array_t events;
  json::array_t processes;
  for (auto& path : inputs) {
    std::ifstream f(path, std::ios::binary);
    if (!f)
      return "cannot read " + path;
    try {
      json root = json::parse(f);
      if (!root.is_object() || !root.contains("traceEvents") || !root["traceEvents"].is_array())
        return path + " is not a trace: no \"traceEvents\" array";
      for (auto& e : root["traceEvents"])
        events.push_back(std::move(e));
      if (auto it = root.find("otherData"); it != root.end())
        processes.push_back(std::move(*it));
    } catch (const std::exception& e) {
      return path + " is not a trace: " + e.what();
    }
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
  other["processes"] = static_cast<std::int64_t>(inputs.size());
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
  for (auto& path : inputs) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
  return "";
}

void remove_stale_launch_traces(int first, int processes, int world) {
  const char* path = std::getenv("AM_TRACE");
  if (path == nullptr || *path == '\0' || world <= 1)
    return;
  for (int p = first; p < first + processes; ++p) {
    std::error_code ignored;
    std::filesystem::remove(observability::trace_file_of(path, p, world), ignored);
  }
}

void merge_launch_traces(int first, int processes, int world, std::ostream& err) {
  const char* path = std::getenv("AM_TRACE");
  if (path == nullptr || *path == '\0' || world <= 1)
    return;
  std::vector<std::string> inputs;
  for (int p = first; p < first + processes; ++p) {
    auto file = observability::trace_file_of(path, p, world);
    if (std::filesystem::exists(file))
      inputs.push_back(file);
  }
  if (inputs.empty()) {
    err << "actormesh launch: AM_TRACE=" << path << " but no process wrote a trace (" << path << ".rank<i>)\n";
    return;
  }
  if (auto why = merge_trace_files(inputs, path); !why.empty()) {
    err << "actormesh launch: the traces were not merged: " << why << "\n";
    return;
  }
  if (static_cast<int>(inputs.size()) < processes)
    err << "actormesh launch: trace " << path << " merged from " << inputs.size() << " of " << processes
        << " processes (the others wrote none)\n";
}

} // namespace am::tools
