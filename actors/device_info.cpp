#include "actormesh/actors/device_info.hpp"

#include "actormesh/actors/errors.hpp"

#include <algorithm>
#include <cctype>

namespace am {

std::string_view platform_name(platform p) noexcept {
  return p == platform::cuda ? "cuda" : "cpu";
}

platform parse_platform(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "cpu")
    return platform::cpu;
  if (lower == "cuda" || lower == "gpu")
    return platform::cuda;
  throw value_error("Unknown platform '" + std::string(text) + "': expected cpu, cuda or gpu");
}

std::string to_string(const device& d) {
  const char* kind = d.platform == platform::cuda ? "CudaDevice" : "CpuDevice";
  return std::string(kind) + "(id=" + std::to_string(d.id) + ")";
}

} // namespace am
