#include "actormesh/colocated/detail/constructor_wire.hpp"

#include "actormesh/actors/errors.hpp"

#include <map>
#include <mutex>

namespace am::detail {

namespace {

struct constructor_table {
  std::mutex mutex;
  std::map<std::string, constructor_from_bytes> constructors;
};

constructor_table& table() {
  static constructor_table t; // a function's static: safe from other static initializers
  return t;
}

} // namespace

void register_constructor(const std::string& key, constructor_from_bytes make) {
  auto& t = table();
  std::lock_guard<std::mutex> guard(t.mutex);
  t.constructors.emplace(key, std::move(make));
}

constructor_from_bytes find_constructor(const std::string& key) {
  auto& t = table();
  std::lock_guard<std::mutex> guard(t.mutex);
  auto it = t.constructors.find(key);
  if (it == t.constructors.end())
    throw value_error("colocated_python: this process cannot build the object (constructor " + key
                      + " is unknown here): the controller and its workers must run the same program");
  return it->second;
}

} // namespace am::detail
