/// The process-wide registry of colocated functions and classes, by name. Code never travels:
/// every process of one binary registers the same names (at static initialization, or before it
/// serves calls), and a call names what it runs. The host side looks the name up here.
#ifndef ACTORMESH_COLOCATED_DETAIL_REGISTRY_HPP
#define ACTORMESH_COLOCATED_DETAIL_REGISTRY_HPP

#include "actormesh/colocated/detail/flat_tree.hpp"

#include <functional>
#include <memory>
#include <string>
#include <typeindex>

namespace am::detail {

/// A registered function: inputs (the tuple of the arguments) -> outputs.
using function_body = std::function<flat_tree(const flat_tree& inputs)>;

/// A registered method: the instance (a T*) and the inputs -> outputs.
using method_body = std::function<flat_tree(void* instance, const flat_tree& inputs)>;

/// What a registration holds: the body and the C++ signature it was registered with (`R(Args...)`
/// with decayed argument types), which typed lookups must match.
template <class Body>
struct registered {
  Body body;
  std::type_index signature;
};

/// Registers a function; throws am::value_error when the name is taken.
void register_function(const std::string& name, function_body body, std::type_index signature);

/// The function registered as `name`; throws am::value_error when there is none.
std::shared_ptr<const registered<function_body>> find_function(const std::string& name);

/// Registers a class name; throws am::value_error when it is taken.
void register_class(const std::string& name);

/// Registers a method of a registered class; throws am::value_error when the class is unknown or
/// the method name is taken.
void register_method(const std::string& class_name, const std::string& method, method_body body,
                     std::type_index signature);

/// The method `method` of class `class_name`; throws am::value_error when there is none.
std::shared_ptr<const registered<method_body>> find_method(const std::string& class_name, const std::string& method);

/// Throws am::type_error unless `found` was registered with `expected` (a typed wrapper asked for
/// another signature than the body has); `what` names it.
void check_signature(std::type_index found, std::type_index expected, const std::string& what);

} // namespace am::detail

#endif // ACTORMESH_COLOCATED_DETAIL_REGISTRY_HPP
