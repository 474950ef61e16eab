#include "actormesh/devices/options.hpp"

#include "cluster/guard/cluster_secret.hpp"
#include "actors/detail/closest_name.hpp"
#include "actors/detail/log.hpp"
#include "actormesh/actors/errors.hpp"
#include "devices/cluster_environment.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <map>
#include <string_view>
#include <utility>

namespace am {

namespace {

// ---- parsing one value ----------------------------------------------------------------------------

void check_at_least(int value, const std::string& source, int minimum) {
  if (value < minimum)
    throw value_error(source + "=" + std::to_string(value) + " is not an integer >= " + std::to_string(minimum));
}

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

/// A duration for messages: "30s", or "1500ms" when it is not whole seconds.
std::string format_duration(std::chrono::milliseconds d) {
  return d.count() % 1000 == 0 ? std::to_string(d.count() / 1000) + "s" : std::to_string(d.count()) + "ms";
}

void check_positive(std::chrono::milliseconds value, const std::string& source) {
  if (value.count() <= 0)
    throw value_error(source + "=" + std::to_string(value.count()) + "ms is not a duration > 0");
}

/// A duration: a whole number, then ms, s or m (none: seconds); more than zero.
std::chrono::milliseconds parse_duration(const std::string& text, const std::string& source) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  std::int64_t scale = unit == "ms" ? 1 : (unit.empty() || unit == "s") ? 1000 : unit == "m" ? 60000 : 0;
  bool ok = ec == std::errc() && end != text.data() && scale != 0 && value > 0
            && value <= std::numeric_limits<std::int64_t>::max() / scale;
  if (!ok)
    throw value_error(source + "='" + text
                      + "' is not a duration > 0 (like 500ms, 30s or 2m; a bare number is seconds)");
  return std::chrono::milliseconds(value * scale);
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

process_role parse_role(const std::string& text, const std::string& source) {
  if (text == "peer")
    return process_role::peer;
  if (text == "controller")
    return process_role::controller;
  if (text == "worker")
    return process_role::worker;
  throw value_error(source + "='" + text + "' is not a process role (peer, controller or worker)");
}

std::string check_log_level(const std::string& text, const std::string& source) {
  detail::log_level level;
  if (!detail::parse_log_level(text, level))
    throw value_error(source + "='" + text
                      + "' is not a log level (off, error, warning, info, debug, trace)");
  return text;
}

/// A frame limit must let CAF's own handshakes and ordinary messages through.
void check_frame_limit(std::uint64_t value, const std::string& source) {
  if (value < (std::uint64_t{1} << 20))
    throw value_error(source + "=" + std::to_string(value) + " is below the smallest frame limit, 1 MiB");
}

std::uint64_t parse_frame_limit(const std::string& text, const std::string& source) {
  auto value = parse_bytes(text, source);
  check_frame_limit(value, source + "='" + text + "'");
  return value;
}

// ---- the option table -----------------------------------------------------------------------------

/// One option's name in each source and how to apply a value from each.
struct option_source {
  const char* field; ///< the am::options field; "options.<field>" names a value set in code
  const char* env;
  const char* flag;
  /// Parses a textual value (from the environment, a flag or a launcher) into the result.
  std::function<void(resolved_options&, const std::string& text, const std::string& source)> apply;
  /// Checks and copies the value set in code, if there is one; returns whether there was.
  std::function<bool(resolved_options&, const options&)> take_code;
};

/// An option of type T: `parse` reads its text, `check` vets a value set in code (throwing
/// value_error naming the source it is given).
template <class T, class Parse, class Check>
option_source typed_option(const char* field, const char* env, const char* flag, std::optional<T> options::*in_code,
                           T resolved_options::*out, Parse parse, Check check) {
  return {field, env, flag,
          [=](resolved_options& o, const std::string& text, const std::string& source) {
            o.*out = parse(text, source);
          },
          [=](resolved_options& o, const options& code) {
            if (!(code.*in_code))
              return false;
            check(*(code.*in_code), std::string("options.") + field);
            o.*out = *(code.*in_code);
            return true;
          }};
}

/// The check of a value set in code that any value passes.
constexpr auto no_check = [](const auto&, const std::string&) {};

/// An integer >= `minimum`.
option_source count_option(const char* field, const char* env, const char* flag, std::optional<int> options::*in_code,
                           int resolved_options::*out, int minimum) {
  return typed_option(
      field, env, flag, in_code, out,
      [minimum](const std::string& text, const std::string& source) { return parse_count(text, source, minimum); },
      [minimum](int value, const std::string& source) { check_at_least(value, source, minimum); });
}

/// A duration > 0 (parse_duration).
option_source duration_option(const char* field, const char* env, const char* flag,
                              std::optional<std::chrono::milliseconds> options::*in_code,
                              std::chrono::milliseconds resolved_options::*out) {
  return typed_option(field, env, flag, in_code, out, parse_duration, check_positive);
}

/// A metrics endpoint's port: 0 (a free one) to 65535.
void check_metrics_port(int value, const std::string& source) {
  if (value < 0 || value > 65535)
    throw value_error(source + "=" + std::to_string(value) + " is not a port from 0 (a free one) to 65535");
}

int parse_metrics_port(const std::string& text, const std::string& source) {
  const int port = parse_count(text, source, 0);
  check_metrics_port(port, source);
  return port;
}

/// A string taken as it is; empty means "not set" (the default, or no coordinator).
option_source text_option(const char* field, const char* env, const char* flag,
                          std::optional<std::string> options::*in_code, std::string resolved_options::*out) {
  return typed_option(
      field, env, flag, in_code, out, [](const std::string& text, const std::string&) { return text; }, no_check);
}

const std::vector<option_source>& option_sources() {
  static const std::vector<option_source> sources = {
    count_option("cpu_devices", "AM_CPU_DEVICES", "--am-cpu-devices", &options::cpu_devices,
                 &resolved_options::cpu_devices, 1),
    typed_option("scheduler", "AM_SCHEDULER", "--am-scheduler", &options::scheduler, &resolved_options::scheduler,
                 parse_policy, no_check),
    count_option("scheduler_threads", "AM_SCHEDULER_THREADS", "--am-scheduler-threads", &options::scheduler_threads,
                 &resolved_options::scheduler_threads, 0),
    typed_option("use_gpus", "AM_USE_GPUS", "--am-gpus", &options::use_gpus, &resolved_options::use_gpus,
                 parse_switch, no_check),
    typed_option("log_level", "AM_LOG", "--am-log", &options::log_level, &resolved_options::log_level,
                 check_log_level, check_log_level),
    typed_option("cpu_memory_limit", "AM_CPU_MEMORY_LIMIT", "--am-cpu-memory-limit", &options::cpu_memory_limit,
                 &resolved_options::cpu_memory_limit, parse_bytes, no_check),
    text_option("trace", "AM_TRACE", "--am-trace", &options::trace, &resolved_options::trace),
    typed_option("metrics_port", "AM_METRICS_PORT", "--am-metrics-port", &options::metrics_port,
                 &resolved_options::metrics_port, parse_metrics_port, check_metrics_port),
    text_option("metrics_host", "AM_METRICS_HOST", "--am-metrics-host", &options::metrics_host,
                &resolved_options::metrics_host),
    // ---- cluster ----
    text_option("coordinator_address", "AM_COORDINATOR", "--am-coordinator", &options::coordinator_address,
                &resolved_options::coordinator_address),
    count_option("num_processes", "AM_NUM_PROCESSES", "--am-num-processes", &options::num_processes,
                 &resolved_options::num_processes, 1),
    count_option("process_id", "AM_PROCESS_ID", "--am-process-id", &options::process_id,
                 &resolved_options::process_id, 0),
    text_option("listen_address", "AM_LISTEN_ADDRESS", "--am-listen-address", &options::listen_address,
                &resolved_options::listen_address),
    duration_option("join_timeout", "AM_JOIN_TIMEOUT", "--am-join-timeout", &options::join_timeout,
                    &resolved_options::join_timeout),
    duration_option("heartbeat_interval", "AM_HEARTBEAT_INTERVAL", "--am-heartbeat-interval",
                    &options::heartbeat_interval, &resolved_options::heartbeat_interval),
    duration_option("heartbeat_timeout", "AM_HEARTBEAT_TIMEOUT", "--am-heartbeat-timeout",
                    &options::heartbeat_timeout, &resolved_options::heartbeat_timeout),
    duration_option("collective_timeout", "AM_COLLECTIVE_TIMEOUT", "--am-collective-timeout",
                    &options::collective_timeout, &resolved_options::collective_timeout),
    duration_option("shutdown_timeout", "AM_SHUTDOWN_TIMEOUT", "--am-shutdown-timeout", &options::shutdown_timeout,
                    &resolved_options::shutdown_timeout),
    text_option("tls_certificate", "AM_TLS_CERTIFICATE", "--am-tls-certificate", &options::tls_certificate,
                &resolved_options::tls_certificate),
    text_option("tls_key", "AM_TLS_KEY", "--am-tls-key", &options::tls_key, &resolved_options::tls_key),
    text_option("tls_ca", "AM_TLS_CA", "--am-tls-ca", &options::tls_ca, &resolved_options::tls_ca),
    typed_option("role", "AM_ROLE", "--am-role", &options::role, &resolved_options::role, parse_role, no_check),
    text_option("cluster_token", "AM_CLUSTER_TOKEN", "--am-cluster-token", &options::cluster_token,
                &resolved_options::cluster_token),
    text_option("cluster_token_file", "AM_CLUSTER_TOKEN_FILE", "--am-cluster-token-file",
                &options::cluster_token_file, &resolved_options::cluster_token_file),
    typed_option("max_frame_bytes", "AM_MAX_FRAME_BYTES", "--am-max-frame-bytes", &options::max_frame_bytes,
                 &resolved_options::max_frame_bytes, parse_frame_limit, check_frame_limit),
    count_option("max_connections", "AM_MAX_CONNECTIONS", "--am-max-connections", &options::max_connections,
                 &resolved_options::max_connections, 1),
  };
  return sources;
}

const option_source& option_named(const std::string& field) {
  auto& sources = option_sources();
  auto it = std::find_if(sources.begin(), sources.end(), [&](auto& s) { return field == s.field; });
  if (it == sources.end())
    throw std::logic_error("no option named " + field);
  return *it;
}

// ---- the layers -----------------------------------------------------------------------------------

/// The layers of option values, lowest precedence first.
enum class layer { launcher, environment, flags, code };

/// Where a decided value came from: its variable(s), flag or "options.<field>", and its layer.
struct origin {
  std::string name;
  layer from;
};

/// The result being decided and where each of its fields got its value (absent: the default).
struct draft {
  resolved_options values;
  std::map<std::string, origin> origins;
  std::optional<launcher_cluster> launcher;
};

void set_text(draft& d, const option_source& option, const std::string& text, origin from) {
  option.apply(d.values, text, from.name);
  d.origins[option.field] = std::move(from);
}

void apply_launcher(draft& d, const environment_lookup& env) {
  d.launcher = detect_launcher_cluster(env);
  if (d.launcher)
    for (auto& s : d.launcher->settings)
      set_text(d, option_named(s.field), s.text, {s.source, layer::launcher});
}

void apply_environment(draft& d, const environment_lookup& env) {
  for (auto& option : option_sources())
    if (const char* text = env(option.env))
      set_text(d, option, text, {option.env, layer::environment});
}

/// Refuses `arg`, a --am-* argument that names no runtime flag, with the nearest flag's name: a
/// misspelt flag silently ignored would run the program with a setting its user never chose.
[[noreturn]] void refuse_unknown_flag(const std::string& arg) {
  const auto flag = arg.substr(0, arg.find('='));
  std::vector<std::string> known;
  for (auto& option : option_sources())
    known.emplace_back(option.flag);
  const auto nearest = detail::closest_name(flag, known);
  throw value_error("unknown runtime flag " + flag
                    + (nearest.empty() ? std::string(" (the runtime's flags are listed in doc/runtime.md)")
                                       : " (did you mean " + nearest + "?)"));
}

void apply_flags(draft& d, const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") // what follows is the program's own, as getopt and CLI11 take it
      return;
    bool known = false;
    for (auto& option : option_sources()) {
      std::string flag = option.flag;
      if (args[i] == flag) {
        if (i + 1 >= args.size())
          throw value_error(flag + " needs a value");
        set_text(d, option, args[++i], {flag, layer::flags});
        known = true;
        break;
      }
      if (args[i].rfind(flag + "=", 0) == 0) {
        set_text(d, option, args[i].substr(flag.size() + 1), {flag, layer::flags});
        known = true;
        break;
      }
    }
    if (!known && args[i].rfind("--am-", 0) == 0)
      refuse_unknown_flag(args[i]);
  }
}

void apply_code(draft& d, const options& in_code) {
  for (auto& option : option_sources())
    if (option.take_code(d.values, in_code))
      d.origins[option.field] = {std::string("options.") + option.field, layer::code};
}

// ---- checks across options ------------------------------------------------------------------------

/// "num_processes=4 (from SLURM_NTASKS)" or "... (default)".
std::string describe(const draft& d, const std::string& field, const std::string& value) {
  auto it = d.origins.find(field);
  return field + "=" + value + (it == d.origins.end() ? " (default)" : " (from " + it->second.name + ")");
}

struct host_port {
  std::string host; ///< without the brackets of an IPv6 address
  int port;
};

/// "host:port" or "[ipv6]:port", the port 1..65535; nothing when `address` is neither.
std::optional<host_port> split_host_port(std::string_view address) {
  auto colon = address.rfind(':');
  if (colon == std::string_view::npos)
    return std::nullopt;
  auto host = address.substr(0, colon);
  auto port = parse_port(address.substr(colon + 1));
  bool bracketed = host.size() >= 3 && host.front() == '[' && host.back() == ']';
  if (bracketed)
    host = host.substr(1, host.size() - 2);
  if (!port || host.empty() || host.find_first_of(bracketed ? "[] \t" : ":[] \t") != std::string_view::npos)
    return std::nullopt;
  return host_port{std::string(host), *port};
}

/// A launcher's coordinator serves a job of several processes only: one process alone (`srun -n 1`,
/// `mpirun -n 1`, or AM_NUM_PROCESSES=1 over the launcher's count) runs locally.
void drop_lone_launcher_coordinator(draft& d) {
  auto it = d.origins.find("coordinator_address");
  if (d.values.num_processes == 1 && it != d.origins.end() && it->second.from == layer::launcher) {
    d.values.coordinator_address.clear();
    d.origins.erase(it);
  }
}

void check_membership(const draft& d) {
  auto& v = d.values;
  if (d.launcher && !d.launcher->num_processes_problem.empty() && !d.origins.count("num_processes"))
    throw value_error(describe(d, "process_id", std::to_string(v.process_id)) + " places this process in "
                      + d.launcher->launcher + ", but " + d.launcher->num_processes_problem);
  if (v.process_id >= v.num_processes)
    throw value_error(describe(d, "process_id", std::to_string(v.process_id)) + " is not below "
                      + describe(d, "num_processes", std::to_string(v.num_processes)));
  if (v.num_processes > 1 && v.coordinator_address.empty()) {
    std::string why;
    if (d.launcher && !d.launcher->coordinator_problem.empty())
      why = " (" + d.launcher->launcher + " names none: " + d.launcher->coordinator_problem + ")";
    throw value_error(describe(d, "num_processes", std::to_string(v.num_processes)) + " needs a coordinator" + why
                      + ": set AM_COORDINATOR or --am-coordinator to host:port");
  }
}

/// Checks the coordinator's address and decides the listen address: the coordinator's host unless
/// one is given.
void check_coordinator(draft& d) {
  auto& v = d.values;
  if (v.coordinator_address.empty())
    return;
  auto address = split_host_port(v.coordinator_address);
  if (!address)
    throw value_error(d.origins.at("coordinator_address").name + "='" + v.coordinator_address
                      + "' is not host:port with a port in 1..65535 (IPv6: [address]:port)");
  if (v.listen_address.empty())
    v.listen_address = address->host;
}

/// A controller is process 0 and drives workers; a worker serves a controller (process 0).
void check_role(const draft& d) {
  auto& v = d.values;
  if (v.role == process_role::controller && v.process_id != 0)
    throw value_error(describe(d, "role", "controller") + " needs process_id 0, not "
                      + describe(d, "process_id", std::to_string(v.process_id))
                      + ": the controller hosts the coordinator");
  if (v.role == process_role::worker && (v.process_id == 0 || !v.clustered()))
    throw value_error(describe(d, "role", "worker") + " joins a controller's cluster as process 1 or above: "
                      + describe(d, "process_id", std::to_string(v.process_id)) + ", "
                      + (v.clustered() ? "coordinator " + v.coordinator_address : std::string("no coordinator")));
}

void check_tls(const draft& d) {
  std::vector<std::pair<const char*, const std::string*>> files = {
    {"tls_certificate", &d.values.tls_certificate}, {"tls_key", &d.values.tls_key}, {"tls_ca", &d.values.tls_ca}};
  std::string given, missing;
  for (auto& [field, value] : files) {
    auto& list = value->empty() ? missing : given;
    list += (list.empty() ? "" : ", ") + (value->empty() ? std::string(field) : describe(d, field, "'" + *value + "'"));
  }
  if (!given.empty() && !missing.empty())
    throw value_error("mutual TLS needs a certificate, its key and a CA file together: " + given + " but no "
                      + missing + " (AM_TLS_CERTIFICATE, AM_TLS_KEY, AM_TLS_CA: all three or none)");
}

/// The secret is given once: as text or as a file, which is read now (so a bad file is named at
/// start, not at the first connection).
void take_cluster_token(draft& d) {
  auto& v = d.values;
  if (v.cluster_token_file.empty())
    return;
  if (!v.cluster_token.empty())
    throw value_error("the cluster's secret is given twice: " + describe(d, "cluster_token", "(hidden)") + " and "
                      + describe(d, "cluster_token_file", "'" + v.cluster_token_file + "'") + "; give one");
  v.cluster_token = detail::read_cluster_token_file(v.cluster_token_file, d.origins.at("cluster_token_file").name.c_str());
}

/// The endpoint of every process of the cluster gets a port: base + the last process's index <= 65535.
void check_metrics(draft& d) {
  auto& v = d.values;
  if (v.metrics_port <= 0)
    return;
  if (v.metrics_port + v.num_processes - 1 > 65535)
    throw value_error(describe(d, "metrics_port", std::to_string(v.metrics_port)) + " leaves no port for process "
                      + std::to_string(v.num_processes - 1) + " (each process listens on the port + its index, at most 65535)");
  if (v.metrics_host.empty())
    v.metrics_host = "127.0.0.1";
}

void check_heartbeat(const draft& d) {
  auto& v = d.values;
  if (v.heartbeat_timeout <= v.heartbeat_interval)
    throw value_error(describe(d, "heartbeat_timeout", format_duration(v.heartbeat_timeout))
                      + " must be longer than "
                      + describe(d, "heartbeat_interval", format_duration(v.heartbeat_interval)));
}

/// The highest layer that set a membership field, named for `actormesh info`; "local" outside a cluster.
std::string cluster_source(const draft& d) {
  if (!d.values.clustered())
    return "local";
  std::optional<layer> top;
  for (const char* field : {"coordinator_address", "num_processes", "process_id"})
    if (auto it = d.origins.find(field); it != d.origins.end() && (!top || it->second.from > *top))
      top = it->second.from;
  switch (top.value_or(layer::code)) {
    case layer::launcher:
      return d.launcher->launcher;
    case layer::environment:
      return "AM_* environment";
    case layer::flags:
      return "flags";
    case layer::code:
      break;
  }
  return "code";
}

} // namespace

resolved_options resolve_options(const options& in_code, const std::vector<std::string>& args,
                                 const environment_lookup& env) {
  draft d;
  apply_launcher(d, env);
  apply_environment(d, env);
  apply_flags(d, args);
  apply_code(d, in_code);
  drop_lone_launcher_coordinator(d);
  check_membership(d);
  check_coordinator(d);
  check_role(d);
  check_tls(d);
  take_cluster_token(d);
  check_heartbeat(d);
  check_metrics(d);
  d.values.cluster_source = cluster_source(d);
  return std::move(d.values);
}

resolved_options resolve_options(const options& in_code, const std::vector<std::string>& args) {
  return resolve_options(in_code, args, [](const char* name) { return std::getenv(name); });
}

std::string runtime_flags_help() {
  std::string text;
  for (auto& option : option_sources()) {
    const std::string flag = std::string(option.flag) + " VALUE";
    text += "  " + flag + std::string(flag.size() < 32 ? 32 - flag.size() : 1, ' ') + option.env + "\n";
  }
  return text;
}

std::string to_string(scheduler_policy p) {
  return p == scheduler_policy::stealing ? "stealing" : "sharing";
}

std::string to_string(process_role r) {
  switch (r) {
    case process_role::controller:
      return "controller";
    case process_role::worker:
      return "worker";
    case process_role::peer:
      break;
  }
  return "peer";
}

} // namespace am
