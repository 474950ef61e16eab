#include "actormesh/colocated/detail/registry.hpp"

#include "actormesh/actors/errors.hpp"

#include <map>
#include <mutex>

namespace am::detail {

namespace {

struct class_entry {
  std::map<std::string, std::shared_ptr<const registered<method_body>>> methods;
};

struct registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const registered<function_body>>> functions;
  std::map<std::string, class_entry> classes;
};

/// Constructed on first use, so registrations from static initializers of any translation unit
/// find it; never destroyed (static destructors of other units may still drop wrappers).
registry& the_registry() {
  static auto* r = new registry;
  return *r;
}

} // namespace

void register_function(const std::string& name, function_body body, std::type_index signature) {
  if (name.empty())
    throw value_error("colocated_python: a function needs a non-empty name");
  auto& r = the_registry();
  std::lock_guard<std::mutex> guard(r.mutex);
  auto entry = std::make_shared<const registered<function_body>>(registered<function_body>{std::move(body), signature});
  if (!r.functions.emplace(name, std::move(entry)).second)
    throw value_error("colocated_python: a function named '" + name + "' is already registered");
}

std::shared_ptr<const registered<function_body>> find_function(const std::string& name) {
  auto& r = the_registry();
  std::lock_guard<std::mutex> guard(r.mutex);
  auto it = r.functions.find(name);
  if (it == r.functions.end())
    throw value_error("colocated_python: no function named '" + name + "' is registered in this process");
  return it->second;
}

void register_class(const std::string& name) {
  if (name.empty())
    throw value_error("colocated_python_class: a class needs a non-empty name");
  auto& r = the_registry();
  std::lock_guard<std::mutex> guard(r.mutex);
  if (!r.classes.emplace(name, class_entry{}).second)
    throw value_error("colocated_python_class: a class named '" + name + "' is already registered");
}

void register_method(const std::string& class_name, const std::string& method, method_body body,
                     std::type_index signature) {
  auto& r = the_registry();
  std::lock_guard<std::mutex> guard(r.mutex);
  auto it = r.classes.find(class_name);
  if (it == r.classes.end())
    throw value_error("colocated_python_class: no class named '" + class_name + "' is registered");
  auto entry = std::make_shared<const registered<method_body>>(registered<method_body>{std::move(body), signature});
  if (!it->second.methods.emplace(method, std::move(entry)).second)
    throw value_error("colocated_python_class: '" + class_name + "' already has a method named '" + method + "'");
}

std::shared_ptr<const registered<method_body>> find_method(const std::string& class_name, const std::string& method) {
  auto& r = the_registry();
  std::lock_guard<std::mutex> guard(r.mutex);
  auto it = r.classes.find(class_name);
  if (it == r.classes.end())
    throw value_error("colocated_python_class: no class named '" + class_name + "' is registered in this process");
  auto m = it->second.methods.find(method);
  if (m == it->second.methods.end())
    throw value_error("'" + class_name + "' object has no attribute '" + method + "'");
  return m->second;
}

void check_signature(std::type_index found, std::type_index expected, const std::string& what) {
  if (found != expected)
    throw type_error(what + " was registered with another signature than the one asked for");
}

} // namespace am::detail
