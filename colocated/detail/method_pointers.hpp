/// Which registered method name a member function pointer stands for, per colocated class: what
/// lets `obj.call(&adder::add, x)` find the method that `def("add", &adder::add)` registered, with
/// its signature taken from the pointer at compile time. Per process, filled as `def` runs (at
/// static initialization, usually), read by calls from any thread.
#ifndef ACTORMESH_COLOCATED_DETAIL_METHOD_POINTERS_HPP
#define ACTORMESH_COLOCATED_DETAIL_METHOD_POINTERS_HPP

#include "actormesh/actors/errors.hpp"

#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace am::detail {

/// The member pointers of type M that classes registered, with their class and method names.
template <class M>
class method_pointers {
public:
  /// Remembers that class `class_name` registered `pm` as method `method`.
  static void add(const std::string& class_name, M pm, const std::string& method) {
    std::lock_guard<std::mutex> guard(mutex());
    entries().push_back(entry{class_name, pm, method});
  }

  /// The method name `pm` was registered as in class `class_name`; throws am::value_error naming
  /// the class when it was never passed to that class's `def`.
  static std::string name_of(const std::string& class_name, M pm) {
    std::lock_guard<std::mutex> guard(mutex());
    for (auto& e : entries())
      if (e.class_name == class_name && e.pm == pm)
        return e.method;
    throw value_error("colocated class '" + class_name
                      + "' has no method registered for this member function: add it with .def(name, &T::method)");
  }

private:
  struct entry {
    std::string class_name;
    M pm;
    std::string method;
  };
  static std::vector<entry>& entries() {
    static std::vector<entry> all;
    return all;
  }
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
};

} // namespace am::detail

#endif // ACTORMESH_COLOCATED_DETAIL_METHOD_POINTERS_HPP
