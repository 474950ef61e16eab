// `actormesh launch`: picking the coordinator's port and building each child's environment.
#include "tools/launch_environment.hpp"

#include "cluster/free_port.hpp"

#include "cluster/guard/cluster_secret.hpp"

#include "actormesh/actors/errors.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <netinet/in.h>
#include <string_view>
#include <sys/socket.h>
#include <unistd.h>

extern char** environ;

namespace am::tools {

namespace {

bool is_variable(std::string_view entry, std::string_view name) {
  return entry.size() > name.size() && entry.substr(0, name.size()) == name && entry[name.size()] == '=';
}

} // namespace

int coordinator_port(std::optional<int> fixed) {
  if (!fixed) {
    try {
      return am::detail::free_loopback_port();
    } catch (const std::exception& e) {
      throw am::runtime_error(std::string("actormesh launch: ") + e.what());
    }
  }
  const int port = am::detail::bind_loopback_once(*fixed);
  if (port > 0)
    return port;
  throw am::value_error("actormesh launch: --coordinator-port " + std::to_string(*fixed) + ": cannot bind 127.0.0.1:"
                        + std::to_string(*fixed) + ": " + std::strerror(errno));
}

std::string launch_cluster_token() {
  // A secret the user gave is checked now (a bad file fails the launch, not every process).
  if (user_gave_cluster_token())
    return {};
  return am::detail::generate_cluster_token();
}

bool user_gave_cluster_token() { return !am::detail::cluster_token_from_environment().empty(); }

std::vector<std::string> child_environment(const cluster_variables& cluster, int process_id) {
  const auto& cpu_devices = cluster.cpu_devices;
  std::vector<std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string_view text(*entry);
    const bool replaced = is_variable(text, coordinator_variable) || is_variable(text, num_processes_variable)
                          || is_variable(text, process_id_variable) || is_variable(text, restart_count_variable)
                          || (cpu_devices && is_variable(text, cpu_devices_variable));
    if (!replaced)
      env.emplace_back(text);
  }
  env.push_back(std::string(coordinator_variable) + "=" + cluster.coordinator);
  env.push_back(std::string(num_processes_variable) + "=" + std::to_string(cluster.num_processes));
  env.push_back(std::string(process_id_variable) + "=" + std::to_string(process_id));
  env.push_back(std::string(restart_count_variable) + "=" + std::to_string(cluster.restart_count));
  if (cpu_devices)
    env.push_back(std::string(cpu_devices_variable) + "=" + std::to_string(*cpu_devices));
  if (!cluster.cluster_token.empty())
    env.push_back("AM_CLUSTER_TOKEN=" + cluster.cluster_token);
  return env;
}

} // namespace am::tools
