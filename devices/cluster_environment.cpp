#include "devices/cluster_environment.hpp"

#include "actormesh/actors/errors.hpp"

#include <charconv>
#include <functional>
#include <initializer_list>

namespace am {

namespace {

constexpr std::size_t max_hosts = 1'000'000;

/// A set variable: its name and value.
struct variable {
  std::string name;
  std::string value;
};

std::optional<std::string> get(const environment_lookup& env, const char* name) {
  if (const char* value = env(name))
    return std::string(value);
  return std::nullopt;
}

/// The first of `names` that is set.
std::optional<variable> first_set(const environment_lookup& env, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (auto value = get(env, name))
      return variable{name, *value};
  return std::nullopt;
}

/// Decimal digits only, no sign, no spaces.
std::optional<std::uint64_t> parse_unsigned(std::string_view text) noexcept {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

// ---- Slurm host lists -----------------------------------------------------------------------------

/// Raises the error of one malformed host list.
struct host_list_failure {
  const std::string& source;
  const std::string& list;
  [[noreturn]] void operator()(const std::string& why) const {
    throw value_error(source + "='" + list + "' is not a Slurm host list: " + why);
  }
};

/// One "lo-hi" (or single number) of a bracket; `width` is the lower bound's digit count.
struct host_range {
  std::uint64_t first;
  std::uint64_t last;
  std::size_t width;
};

std::vector<std::string_view> split_outside_brackets(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    } else if (text[i] == '[') {
      ++depth;
    } else if (text[i] == ']') {
      --depth;
    }
  }
  return parts;
}

host_range parse_range(std::string_view piece, const host_list_failure& fail) {
  auto dash = piece.find('-');
  auto low = piece.substr(0, dash);
  auto high = dash == std::string_view::npos ? low : piece.substr(dash + 1);
  auto first = parse_unsigned(low);
  auto last = parse_unsigned(high);
  if (!first || !last)
    fail("'" + std::string(piece) + "' is not a number or a range of numbers");
  if (*last < *first)
    fail("the range '" + std::string(piece) + "' runs backwards");
  return {*first, *last, low.size()};
}

std::string padded(std::uint64_t number, std::size_t width) {
  auto digits = std::to_string(number);
  return digits.size() < width ? std::string(width - digits.size(), '0') + digits : digits;
}

/// Appends the hosts of one pattern (any number of bracket groups) to `out`, each after `stem`.
void expand_pattern(std::string_view pattern, const std::string& stem, std::vector<std::string>& out,
                    const host_list_failure& fail) {
  auto open = pattern.find('[');
  auto head = pattern.substr(0, open);
  if (head.find(']') != std::string_view::npos)
    fail("']' without '['");
  if (open == std::string_view::npos) {
    if (out.size() == max_hosts)
      fail("more than " + std::to_string(max_hosts) + " hosts");
    out.push_back(stem + std::string(head));
    return;
  }
  auto close = pattern.find(']', open);
  auto inside = pattern.substr(open + 1, close == std::string_view::npos ? close : close - open - 1);
  if (close == std::string_view::npos || inside.find('[') != std::string_view::npos)
    fail("'[' without ']'");
  for (auto piece : split_outside_brackets(inside)) {
    auto range = parse_range(piece, fail);
    for (auto n = range.first;; ++n) {
      expand_pattern(pattern.substr(close + 1), stem + std::string(head) + padded(n, range.width), out, fail);
      if (n == range.last)
        break;
    }
  }
}

// ---- the coordinator ------------------------------------------------------------------------------

/// A job id getter: nothing when the launcher's variables name none; throws value_error when they
/// are malformed.
using job_id_reader = std::function<std::optional<std::uint64_t>()>;

/// The port and the variable it came from.
struct port_choice {
  int port;
  std::string source;
};

/// AM_COORDINATOR_PORT when set (throws value_error when it is not a port), else nothing.
std::optional<port_choice> port_override(const environment_lookup& env) {
  auto text = get(env, "AM_COORDINATOR_PORT");
  if (!text)
    return std::nullopt;
  auto port = parse_port(*text);
  if (!port)
    throw value_error("AM_COORDINATOR_PORT='" + *text + "' is not a port (1..65535)");
  return port_choice{*port, "AM_COORDINATOR_PORT"};
}

/// Adds the coordinator on the host that `read_host` reads from `host_source` to `cluster`, its
/// port AM_COORDINATOR_PORT or else derived from the job id in `job_variable`; or says why there is
/// none. `read_host` and `job_id` throw value_error when their variables are malformed.
void add_coordinator(launcher_cluster& cluster, const environment_lookup& env, const std::string& host_source,
                     const std::function<std::string()>& read_host, const char* job_variable,
                     const job_id_reader& job_id) {
  auto port = port_override(env);
  try {
    auto host = read_host();
    if (!port)
      if (auto id = job_id())
        port = port_choice{derived_coordinator_port(*id), job_variable};
    if (!port) {
      cluster.coordinator_problem = std::string(job_variable) + " is not set, so no port can be derived";
      return;
    }
    auto source = port->source == host_source ? host_source : host_source + " and " + port->source;
    cluster.settings.push_back({"coordinator_address", host + ":" + std::to_string(port->port), source});
  } catch (const value_error& e) {
    cluster.coordinator_problem = e.what();
  }
}

/// The first address of a URI list such as "1987903488.0;tcp://192.0.2.2,10.0.0.1:36601;tcp6://[fd00::2]:44937":
/// after `ipv4_scheme` up to ',', ':' or ';'; else the first address of "tcp6://[...]", in brackets.
std::optional<std::string> first_uri_address(std::string_view uri, std::string_view ipv4_scheme) {
  if (auto at = uri.find(ipv4_scheme); at != std::string_view::npos) {
    auto start = at + ipv4_scheme.size();
    auto end = uri.find_first_of(",:;", start);
    if (end != std::string_view::npos && end > start)
      return std::string(uri.substr(start, end - start));
  }
  constexpr std::string_view ipv6_scheme = "tcp6://[";
  if (auto at = uri.find(ipv6_scheme); at != std::string_view::npos) {
    auto start = at + ipv6_scheme.size();
    auto end = uri.find_first_of(",]", start);
    if (end != std::string_view::npos && end > start)
      return "[" + std::string(uri.substr(start, end - start)) + "]";
  }
  return std::nullopt;
}

std::string uri_host(const variable& uri, std::string_view ipv4_scheme) {
  if (auto host = first_uri_address(uri.value, ipv4_scheme))
    return *host;
  throw value_error(uri.name + "='" + uri.value + "' names no " + std::string(ipv4_scheme)
                    + " or tcp6:// address");
}

/// The number before the '.' of OMPI_MCA_orte_hnp_uri, divided by 4096.
std::optional<std::uint64_t> orte_job_id(const variable& uri) {
  auto id = parse_unsigned(std::string_view(uri.value).substr(0, uri.value.find('.')));
  if (!id)
    throw value_error(uri.name + "='" + uri.value + "' does not start with a job id");
  return *id / 4096;
}

/// The number between the last '-' and the '@' of PMIX_NAMESPACE ("prterun-host-1234@1").
std::optional<std::uint64_t> prrte_job_id(const environment_lookup& env) {
  auto ns = get(env, "PMIX_NAMESPACE");
  if (!ns)
    return std::nullopt;
  auto at = ns->find('@');
  auto dash = at == std::string::npos ? std::string::npos : ns->rfind('-', at);
  auto id = dash == std::string::npos ? std::nullopt
                                      : parse_unsigned(std::string_view(*ns).substr(dash + 1, at - dash - 1));
  if (!id)
    throw value_error("PMIX_NAMESPACE='" + *ns + "' has no job id (like prterun-host-1234@1)");
  return id;
}

// ---- the launchers --------------------------------------------------------------------------------

std::optional<launcher_cluster> detect_open_mpi(const environment_lookup& env) {
  auto rank = get(env, "OMPI_COMM_WORLD_RANK");
  auto size = get(env, "OMPI_COMM_WORLD_SIZE");
  if (!rank || !size)
    return std::nullopt;
  launcher_cluster cluster{"Open MPI",
                           {{"process_id", *rank, "OMPI_COMM_WORLD_RANK"},
                            {"num_processes", *size, "OMPI_COMM_WORLD_SIZE"}},
                           {},
                           {}};
  if (auto orte = first_set(env, {"OMPI_MCA_orte_hnp_uri"})) {
    add_coordinator(cluster, env, orte->name, [&] { return uri_host(*orte, "tcp://"); }, "OMPI_MCA_orte_hnp_uri",
                    [&] { return orte_job_id(*orte); });
    return cluster;
  }
  auto pmix = get(env, "PRTE_LAUNCHED") == "1"
                  ? first_set(env, {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
                                    "PMIX_SERVER_URI21", "PMIX_SERVER_URI2"})
                  : std::nullopt;
  if (pmix)
    add_coordinator(cluster, env, pmix->name, [&] { return uri_host(*pmix, "tcp4://"); }, "PMIX_NAMESPACE",
                    [&] { return prrte_job_id(env); });
  else
    cluster.coordinator_problem = "neither OMPI_MCA_orte_hnp_uri nor (with PRTE_LAUNCHED=1) a PMIX_SERVER_URI is set";
  return cluster;
}

std::optional<launcher_cluster> detect_slurm(const environment_lookup& env) {
  auto rank = get(env, "SLURM_PROCID");
  auto size = get(env, "SLURM_NTASKS");
  auto nodes = first_set(env, {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"});
  if (!rank || !size || !nodes)
    return std::nullopt;
  launcher_cluster cluster{"Slurm",
                           {{"process_id", *rank, "SLURM_PROCID"}, {"num_processes", *size, "SLURM_NTASKS"}},
                           {},
                           {}};
  add_coordinator(cluster, env, nodes->name, [&] { return expand_slurm_host_list(nodes->value, nodes->name).front(); },
                  "SLURM_JOB_ID", [&]() -> std::optional<std::uint64_t> {
                    auto text = get(env, "SLURM_JOB_ID");
                    if (!text)
                      return std::nullopt;
                    if (auto id = parse_unsigned(*text))
                      return id;
                    throw value_error("SLURM_JOB_ID='" + *text + "' is not a job id (a number)");
                  });
  return cluster;
}

/// torchrun (and torch.distributed.launch): RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT, all four.
/// MASTER_PORT is torch's own store's (torchrun's agent listens there), so the coordinator takes the
/// port after it unless AM_COORDINATOR_PORT says otherwise.
std::optional<launcher_cluster> detect_torchrun(const environment_lookup& env) {
  auto rank = get(env, "RANK");
  auto size = get(env, "WORLD_SIZE");
  auto host = get(env, "MASTER_ADDR");
  auto master_port = get(env, "MASTER_PORT");
  if (!rank || !size || !host || !master_port)
    return std::nullopt;
  launcher_cluster cluster{"torchrun", {{"process_id", *rank, "RANK"}, {"num_processes", *size, "WORLD_SIZE"}}, {}, {}};
  auto port = port_override(env);
  if (!port) {
    auto torch_port = parse_port(*master_port);
    if (!torch_port || *torch_port == 65535) {
      cluster.coordinator_problem = "MASTER_PORT='" + *master_port + "' is not a port below 65535";
      return cluster;
    }
    port = port_choice{*torch_port + 1, "MASTER_PORT + 1"};
  }
  cluster.settings.push_back(
    {"coordinator_address", *host + ":" + std::to_string(port->port), "MASTER_ADDR and " + port->source});
  return cluster;
}

/// A Kubernetes Indexed Job: each pod's JOB_COMPLETION_INDEX is its process id. The Job says neither
/// how many pods it has nor where pod 0 is; its manifest sets AM_NUM_PROCESSES and AM_COORDINATOR
/// (pod 0 through the Job's headless service, doc/multihost.md).
std::optional<launcher_cluster> detect_kubernetes(const environment_lookup& env) {
  auto index = get(env, "JOB_COMPLETION_INDEX");
  if (!index)
    return std::nullopt;
  launcher_cluster cluster{"a Kubernetes Indexed Job", {{"process_id", *index, "JOB_COMPLETION_INDEX"}}, {}, {}};
  cluster.coordinator_problem = "set AM_COORDINATOR to pod 0 through the Job's headless service, "
                                "<job>-0.<service>:<port> (doc/multihost.md)";
  cluster.num_processes_problem = "the Job does not say how many pods it has: set AM_NUM_PROCESSES to its "
                                  "completions (doc/multihost.md)";
  return cluster;
}

} // namespace

std::optional<launcher_cluster> detect_launcher_cluster(const environment_lookup& env) {
  for (auto detect : {detect_torchrun, detect_open_mpi, detect_slurm, detect_kubernetes})
    if (auto cluster = detect(env))
      return cluster;
  return std::nullopt;
}

std::vector<std::string> expand_slurm_host_list(const std::string& list, const std::string& source) {
  host_list_failure fail{source, list};
  std::vector<std::string> hosts;
  for (auto pattern : split_outside_brackets(list)) {
    if (pattern.empty())
      fail("an empty host name");
    expand_pattern(pattern, {}, hosts, fail);
  }
  return hosts;
}

int derived_coordinator_port(std::uint64_t job_id) noexcept {
  return static_cast<int>(job_id % 4096 + (65535 - 4096 + 1));
}

std::optional<int> parse_port(std::string_view text) noexcept {
  auto value = parse_unsigned(text);
  if (!value || *value < 1 || *value > 65535)
    return std::nullopt;
  return static_cast<int>(*value);
}

} // namespace am
