#include "tools/launch_trace.hpp"

#include "multihost/detail/json.hpp"
#include "observability/trace_session.hpp"
#include "observability/trace_writer.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>

namespace am::tools {

namespace {

using am::detail::json;

double number(const json& j) {
  if (auto* i = std::get_if<std::int64_t>(&j.value))
    return static_cast<double>(*i);
  if (auto* d = std::get_if<double>(&j.value))
    return *d;
  return 0;
}

} // namespace

std::string merge_trace_files(const std::vector<std::string>& inputs, const std::string& output) {
  json::array_t events;
  json::array_t processes;
  for (auto& path : inputs) {
    std::ifstream f(path, std::ios::binary);
    if (!f)
      return "cannot read " + path;
    std::ostringstream text;
    text << f.rdbuf();
    try {
      json root = json::parse(text.str());
      auto& top = std::get<json::object_t>(root.value);
      auto& list = std::get<json::array_t>(top.at("traceEvents").value);
      for (auto& e : list)
        events.push_back(std::move(e));
      if (auto it = top.find("otherData"); it != top.end())
        processes.push_back(std::move(it->second));
    } catch (const std::exception& e) {
      return path + " is not a trace: " + e.what();
    }
  }
  // Events of a process that started before process 0 have negative times: shift all to >= 0.
  double earliest = std::numeric_limits<double>::infinity();
  for (auto& e : events)
    if (auto* o = std::get_if<json::object_t>(&e.value); o && o->count("ts"))
      earliest = std::min(earliest, number(o->at("ts")));
  if (earliest < 0)
    for (auto& e : events)
      if (auto* o = std::get_if<json::object_t>(&e.value); o && o->count("ts"))
        (*o)["ts"] = json(number(o->at("ts")) - earliest);
  json::object_t other;
  other["actormesh_trace"] = json(1);
  other["processes"] = json(static_cast<std::int64_t>(inputs.size()));
  other["merged_from"] = json(std::move(processes));
  other["shifted_us"] = json(earliest < 0 ? -earliest : 0.0);
  json::object_t top;
  top["traceEvents"] = json(std::move(events));
  top["displayTimeUnit"] = json("ns");
  top["otherData"] = json(std::move(other));
  auto why = observability::write_text_file(output, json(std::move(top)).dump() + "\n");
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
