#include "devices/options.hpp"

#include "actors/detail/log.hpp"
#include "actors/errors.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>

namespace am {

namespace {

int parse_count(const std::string& text, const std::string& source, int minimum) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < minimum)
    throw value_error(source + "='" + text + "' is not an integer >= " + std::to_string(minimum));
  return value;
}

/// A byte count: digits, then optionally k, m, g or t (powers of 1024), then optionally "iB" or "B".
std::uint64_t parse_bytes(const std::string& text, const std::string& source) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string unit(end, text.data() + text.size());
  int shift = 0;
  if (!unit.empty()) {
    const std::string prefixes = "kmgt";
    auto at = prefixes.find(static_cast<char>(std::tolower(static_cast<unsigned char>(unit[0]))));
    if (at != std::string::npos) {
      shift = 10 * static_cast<int>(at + 1);
      unit.erase(0, 1);
      if (unit == "iB" || unit == "ib")
        unit.clear();
    }
  }
  bool ok = ec == std::errc() && end != text.data() && (unit.empty() || unit == "B" || unit == "b")
            && (shift == 0 || value <= (~std::uint64_t{0} >> shift));
  if (!ok)
    throw value_error(source + "='" + text + "' is not a byte count (like 1073741824, 512M or 2GiB)");
  return value << shift;
}

bool parse_switch(const std::string& text, const std::string& source) {
  if (text == "1" || text == "on" || text == "true" || text == "yes")
    return true;
  if (text == "0" || text == "off" || text == "false" || text == "no")
    return false;
  throw value_error(source + "='" + text + "' is not one of on, off, true, false, 1, 0");
}

scheduler_policy parse_policy(const std::string& text, const std::string& source) {
  if (text == "sharing")
    return scheduler_policy::sharing;
  if (text == "stealing")
    return scheduler_policy::stealing;
  throw value_error(source + "='" + text + "' is not a scheduler policy (sharing or stealing)");
}

std::string check_log_level(const std::string& text, const std::string& source) {
  detail::log_level level;
  if (!detail::parse_log_level(text, level))
    throw value_error(source + "='" + text
                      + "' is not a log level (off, error, warning, info, debug, trace)");
  return text;
}

/// One option's name in each source and how to apply a textual value to the result.
struct option_source {
  const char* env;
  const char* flag;
  std::function<void(resolved_options&, const std::string&, const std::string&)> apply;
};

const std::vector<option_source>& option_sources() {
  static const std::vector<option_source> sources = {
    {"AM_CPU_DEVICES", "--am-cpu-devices",
     [](resolved_options& o, const std::string& v, const std::string& src) {
       o.cpu_devices = parse_count(v, src, 1);
     }},
    {"AM_SCHEDULER", "--am-scheduler",
     [](resolved_options& o, const std::string& v, const std::string& src) {
       o.scheduler = parse_policy(v, src);
     }},
    {"AM_SCHEDULER_THREADS", "--am-scheduler-threads",
     [](resolved_options& o, const std::string& v, const std::string& src) {
       o.scheduler_threads = parse_count(v, src, 0);
     }},
    {"AM_USE_GPUS", "--am-gpus",
     [](resolved_options& o, const std::string& v, const std::string& src) {
       o.use_gpus = parse_switch(v, src);
     }},
    {"AM_LOG", "--am-log",
     [](resolved_options& o, const std::string& v, const std::string& src) {
       o.log_level = check_log_level(v, src);
     }},
    {"AM_CPU_MEMORY_LIMIT", "--am-cpu-memory-limit",
     [](resolved_options& o, const std::string& v, const std::string& src) {
       o.cpu_memory_limit = parse_bytes(v, src);
     }},
  };
  return sources;
}

} // namespace

resolved_options resolve_options(const options& in_code, const std::vector<std::string>& args,
                                 const environment_lookup& env) {
  resolved_options out;
  for (auto& src : option_sources())
    if (const char* v = env(src.env))
      src.apply(out, v, src.env);
  for (std::size_t i = 0; i < args.size(); ++i) {
    for (auto& src : option_sources()) {
      std::string flag = src.flag;
      if (args[i] == flag) {
        if (i + 1 >= args.size())
          throw value_error(flag + " needs a value");
        src.apply(out, args[i + 1], flag);
        ++i;
        break;
      }
      if (args[i].rfind(flag + "=", 0) == 0) {
        src.apply(out, args[i].substr(flag.size() + 1), flag);
        break;
      }
    }
  }
  if (in_code.cpu_devices) {
    if (*in_code.cpu_devices < 1)
      throw value_error("options.cpu_devices=" + std::to_string(*in_code.cpu_devices)
                        + " is not an integer >= 1");
    out.cpu_devices = *in_code.cpu_devices;
  }
  if (in_code.scheduler)
    out.scheduler = *in_code.scheduler;
  if (in_code.scheduler_threads) {
    if (*in_code.scheduler_threads < 0)
      throw value_error("options.scheduler_threads must be >= 0");
    out.scheduler_threads = *in_code.scheduler_threads;
  }
  if (in_code.use_gpus)
    out.use_gpus = *in_code.use_gpus;
  if (in_code.log_level)
    out.log_level = check_log_level(*in_code.log_level, "options.log_level");
  if (in_code.cpu_memory_limit)
    out.cpu_memory_limit = *in_code.cpu_memory_limit;
  return out;
}

resolved_options resolve_options(const options& in_code, const std::vector<std::string>& args) {
  return resolve_options(in_code, args, [](const char* name) { return std::getenv(name); });
}

std::string to_string(scheduler_policy p) {
  return p == scheduler_policy::stealing ? "stealing" : "sharing";
}

} // namespace am
