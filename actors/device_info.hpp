/// The device descriptor: plain data naming one device of the cluster.
#ifndef ACTORMESH_ACTORS_DEVICE_INFO_HPP
#define ACTORMESH_ACTORS_DEVICE_INFO_HPP

#include <cstdint>
#include <string>
#include <string_view>

namespace am {

/// The kind of hardware a device is.
enum class platform : std::uint8_t { cpu, cuda };

/// Lower-case platform name as JAX spells it (`cpu`, `cuda`).
std::string_view platform_name(platform p) noexcept;

/// Parses `cpu`, `cuda` or `gpu` (any case); throws am::value_error otherwise.
platform parse_platform(std::string_view text);

/// One device of the cluster. Copyable, comparable, printable like JAX (`CpuDevice(id=0)`).
///
/// `id` is global and unique in the cluster; `process_index` names the process that owns the device;
/// `local_ordinal` is its index among the same platform's devices of that process (the CUDA ordinal
/// for GPUs).
struct device {
  int id = 0;
  int process_index = 0;
  am::platform platform = am::platform::cpu;
  int local_ordinal = 0;

  friend bool operator==(const device&, const device&) = default;
  friend auto operator<=>(const device& a, const device& b) noexcept { return a.id <=> b.id; }
};

/// `CpuDevice(id=0)` / `CudaDevice(id=8)`.
std::string to_string(const device& d);

} // namespace am

#endif // ACTORMESH_ACTORS_DEVICE_INFO_HPP
