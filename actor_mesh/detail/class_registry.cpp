#include "actormesh/actor_mesh/detail/class_registry.hpp"

#include "actormesh/actors/errors.hpp"

#include <map>

namespace am::detail {

namespace {

std::mutex registry_mutex;

std::map<std::string, std::shared_ptr<actor_class_info>>& classes() {
  static std::map<std::string, std::shared_ptr<actor_class_info>> all;
  return all;
}

} // namespace

std::shared_ptr<actor_class_info> register_actor_class(const std::string& name) {
  if (name.empty())
    throw value_error("actor_class: the class name is empty");
  std::lock_guard<std::mutex> guard(registry_mutex);
  auto& slot = classes()[name];
  if (slot)
    throw value_error("actor class '" + name + "' is already registered");
  slot = std::make_shared<actor_class_info>();
  slot->name = name;
  return slot;
}

std::shared_ptr<const actor_class_info> find_actor_class(const std::string& name) {
  std::lock_guard<std::mutex> guard(registry_mutex);
  auto it = classes().find(name);
  if (it == classes().end())
    throw value_error("actor class '" + name + "' is not registered in this process (every process of the "
                      "program registers the same classes: is it running the same binary?)");
  return it->second;
}

void add_endpoint(actor_class_info& info, endpoint_entry entry) {
  if (entry.name.empty() || entry.name.rfind("am.", 0) == 0)
    throw value_error("actor class '" + info.name + "': the endpoint name '" + entry.name
                      + "' is empty or starts with \"am.\" (names the runtime keeps for itself)");
  std::lock_guard<std::mutex> guard(info.mutex);
  for (auto& e : info.endpoints) {
    if (e.name == entry.name)
      throw value_error("actor class '" + info.name + "' already has an endpoint named '" + entry.name + "'");
    if (e.member_type == entry.member_type && e.member == entry.member)
      throw value_error("actor class '" + info.name + "': this member function is already the endpoint '" + e.name
                        + "'");
  }
  info.endpoints.push_back(std::move(entry));
}

std::shared_ptr<const std::vector<endpoint_entry>> endpoints_of(const actor_class_info& info) {
  std::lock_guard<std::mutex> guard(info.mutex);
  return std::make_shared<const std::vector<endpoint_entry>>(info.endpoints);
}

const endpoint_entry* find_endpoint(const std::vector<endpoint_entry>& endpoints, const std::string& name) {
  for (auto& e : endpoints)
    if (e.name == name)
      return &e;
  return nullptr;
}

const std::string& endpoint_name(const std::string& class_name, const std::vector<endpoint_entry>& endpoints,
                                 std::type_index type, const std::string& member) {
  for (auto& e : endpoints)
    if (e.member_type == type && e.member == member)
      return e.name;
  throw value_error("the member function called is not an endpoint of actor class '" + class_name
                    + "' (register it with .endpoint(name, &T::function) before spawning)");
}

} // namespace am::detail
