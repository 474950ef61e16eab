/// Loading an optional shared library at run time (dlopen): the first of several names that loads,
/// and its entry points by name. NVRTC and cuBLAS load this way, so libactormesh starts without
/// them. Internal.
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>

namespace am::detail::cuda {

/// The first of `names` that dlopen loads (empty names are skipped), or nullptr; `tried` then lists
/// the names tried, comma-separated.
void* open_first(std::initializer_list<const char*> names, std::string& tried);

/// Sets `f` to entry point `name` of `lib`; false when it lacks it.
template <class F>
bool resolve(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

} // namespace am::detail::cuda
