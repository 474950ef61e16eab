#include "actormesh/actor_mesh/detail/actor_task.hpp"

#include "actormesh/actor_mesh/actor_errors.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <typeinfo>

namespace am::detail {

namespace {

std::string demangled(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

} // namespace

bool is_actor_fault(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const actor_fault&) {
    return true;
  } catch (...) {
    return false;
  }
}

std::string describe_exception(const std::exception_ptr& e) {
  if (!e)
    return "no error";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return demangled(typeid(x).name()) + ": " + x.what();
  } catch (...) {
    auto* type = abi::__cxa_current_exception_type();
    return type ? demangled(type->name()) : std::string("an unknown exception");
  }
}

} // namespace am::detail
