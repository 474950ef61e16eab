/// The default device of this thread for a while: inside a colocated body, the first device the
/// call runs on, so that host data put without a device lands where the call's outputs belong.
/// Internal.
#pragma once

#include "actormesh/actors/device_info.hpp"

#include <optional>

namespace am::detail {

/// Makes `d` this thread's default device (am::default_device) until destroyed; scopes nest.
class default_device_scope {
public:
  explicit default_device_scope(const device& d) noexcept;
  ~default_device_scope();
  default_device_scope(const default_device_scope&) = delete;
  default_device_scope& operator=(const default_device_scope&) = delete;

private:
  std::optional<device> previous_;
};

} // namespace am::detail
