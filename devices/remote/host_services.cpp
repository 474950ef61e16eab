#include "devices/remote/host_services.hpp"

#include "actormesh/actors/errors.hpp"

#include <map>
#include <mutex>

namespace am::detail::remote {

namespace {

struct service_table {
  std::mutex mutex;
  std::map<std::string, host_service> services;
};

service_table& table() {
  static service_table t; // a function's static: safe to use from other static initializers
  return t;
}

} // namespace

void register_host_service(const std::string& name, host_service service) {
  auto& t = table();
  std::lock_guard<std::mutex> guard(t.mutex);
  if (!t.services.emplace(name, std::move(service)).second)
    throw value_error("host service '" + name + "' is already registered");
}

host_service find_host_service(const std::string& name) {
  auto& t = table();
  std::lock_guard<std::mutex> guard(t.mutex);
  auto it = t.services.find(name);
  if (it == t.services.end())
    throw value_error("Worker process has no host service '" + name
                      + "': the controller and its workers must run the same program");
  return it->second;
}

} // namespace am::detail::remote
