#include "observability/flight_dump.hpp"

#include "actormesh/actors/errors.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

namespace am::observability {

namespace {

constexpr const char* magic = "actormesh flight recorder 1";
constexpr std::size_t field_count = 13; ///< after "entry"
constexpr std::uintmax_t max_dump_bytes = 64u << 20;

/// `s` with tabs and line breaks as spaces.
std::string clean(const std::string& s) {
  std::string out = s;
  std::replace_if(out.begin(), out.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
  return out;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (;;) {
    const auto next = line.find(sep, at);
    out.push_back(line.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos)
      return out;
    at = next + 1;
  }
}

[[noreturn]] void malformed(const std::string& source, std::size_t line, const std::string& why) {
  throw value_error("Malformed flight recorder dump " + source + ", line " + std::to_string(line) + ": " + why);
}

std::int64_t number(const std::string& text, const std::string& source, std::size_t line, const char* what) {
  if (text.empty() || text.size() > 19 || !std::all_of(text.begin(), text.end(), [](char c) {
        return c >= '0' && c <= '9';
      }))
    malformed(source, line, std::string(what) + " is not a non-negative integer: '" + text + "'");
  return std::stoll(text);
}

op_state state_named(const std::string& text, const std::string& source, std::size_t line) {
  for (auto s : {op_state::issued, op_state::checked, op_state::completed, op_state::failed})
    if (text == name(s))
      return s;
  malformed(source, line, "unknown state '" + text + "'");
}

} // namespace

void write_flight_dump(std::ostream& out, const flight_dump& dump) {
  out << magic << '\n' << "process " << dump.process << '\n' << "reason " << clean(dump.reason) << '\n'
      << "dumped_us " << dump.dumped_us << '\n';
  for (const auto& e : dump.entries) {
    std::string procs;
    for (std::size_t i = 0; i < e.participants.size(); ++i)
      procs += (i ? "," : "") + std::to_string(e.participants[i]);
    out << "entry\t" << e.record << '\t' << clean(e.communicator) << '\t' << e.step << '\t' << clean(e.op) << '\t'
        << clean(e.dtype) << '\t' << clean(e.shape) << '\t' << name(e.state) << '\t' << e.issued_us << '\t'
        << e.checked_us << '\t' << e.ended_us << '\t' << procs << '\t' << clean(e.signature) << '\t'
        << clean(e.error) << '\n';
  }
}

flight_dump parse_flight_dump(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  std::string line;
  std::size_t n = 0;
  flight_dump dump;
  bool have_process = false;
  while (std::getline(in, line)) {
    ++n;
    if (n == 1) {
      if (line != magic)
        malformed(source, n, "it does not start with '" + std::string(magic) + "'");
      continue;
    }
    if (line.rfind("process ", 0) == 0) {
      const auto v = number(line.substr(8), source, n, "the process");
      if (v > 1'000'000)
        malformed(source, n, "process " + std::to_string(v) + " is out of range");
      dump.process = static_cast<int>(v);
      have_process = true;
    } else if (line.rfind("reason ", 0) == 0) {
      dump.reason = line.substr(7);
    } else if (line.rfind("dumped_us ", 0) == 0) {
      dump.dumped_us = number(line.substr(10), source, n, "dumped_us");
    } else if (line.rfind("entry\t", 0) == 0) {
      auto f = split(line, '\t');
      if (f.size() != field_count + 1)
        malformed(source, n, "an entry has " + std::to_string(f.size() - 1) + " fields, not "
                               + std::to_string(field_count));
      flight_entry e;
      e.record = static_cast<std::uint64_t>(number(f[1], source, n, "the record"));
      e.communicator = f[2];
      e.step = static_cast<std::uint64_t>(number(f[3], source, n, "the step"));
      e.op = f[4];
      e.dtype = f[5];
      e.shape = f[6];
      e.state = state_named(f[7], source, n);
      e.issued_us = number(f[8], source, n, "issued_us");
      e.checked_us = number(f[9], source, n, "checked_us");
      e.ended_us = number(f[10], source, n, "ended_us");
      if (!f[11].empty())
        for (auto& p : split(f[11], ','))
          e.participants.push_back(static_cast<int>(number(p, source, n, "a participant")));
      e.signature = f[12];
      e.error = f[13];
      dump.entries.push_back(std::move(e));
    } else if (!line.empty()) {
      malformed(source, n, "unknown line '" + line.substr(0, 80) + "'");
    }
  }
  if (n == 0)
    malformed(source, 1, "it is empty");
  if (!have_process)
    malformed(source, n, "it names no process");
  return dump;
}

flight_dump read_flight_dump(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec)
    throw value_error("Cannot read flight recorder dump " + path + ": " + ec.message());
  if (size > max_dump_bytes)
    throw value_error("Flight recorder dump " + path + " has " + std::to_string(size)
                      + " bytes, more than a dump can hold (64 MiB)");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof())
    throw value_error("Cannot read flight recorder dump " + path);
  return parse_flight_dump(text.str(), path);
}

std::vector<flight_dump> read_flight_dumps(const std::string& directory) {
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec))
    throw value_error("'" + directory + "' is not a directory of flight recorder dumps");
  std::vector<flight_dump> dumps;
  for (const auto& f : std::filesystem::directory_iterator(directory)) {
    const std::string file = f.path().filename().string();
    if (file.rfind("flight_recorder.", 0) != 0 || file.size() < 21 || file.substr(file.size() - 4) != ".txt")
      continue;
    dumps.push_back(read_flight_dump(f.path().string()));
  }
  if (dumps.empty())
    throw value_error("'" + directory + "' holds no flight recorder dumps (flight_recorder.<process>.txt)");
  std::sort(dumps.begin(), dumps.end(), [](const auto& a, const auto& b) { return a.process < b.process; });
  for (std::size_t i = 1; i < dumps.size(); ++i)
    if (dumps[i].process == dumps[i - 1].process)
      throw value_error("'" + directory + "' holds two dumps of process " + std::to_string(dumps[i].process));
  return dumps;
}

} // namespace am::observability
