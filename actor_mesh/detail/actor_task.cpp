#include "actor_mesh/detail/actor_task.hpp"

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
