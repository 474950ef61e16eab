#include "devices/cuda/shared_library.hpp"

namespace am::detail::cuda {

void* open_first(std::initializer_list<const char*> names, std::string& tried) {
  for (const char* name : names) {
    if (!*name)
      continue;
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))
      return lib;
    tried += std::string(tried.empty() ? "" : ", ") + name;
  }
  return nullptr;
}

} // namespace am::detail::cuda
