/// The running of a colocated function's body or a colocated method on this thread: the devices
/// of the call (am::colocated_devices, and the first as the default device meanwhile), and whether
/// a body is running (a thread inside one does not wait for destructions it owes, see
/// pending_destructions.hpp). Internal.
#pragma once

#include "actormesh/actors/device_info.hpp"
#include "devices/detail/default_device_scope.hpp"

#include <optional>
#include <vector>

namespace am::detail {

/// Marks a colocated body or method running on this thread, on `devices` (kept alive by the
/// caller for the scope's life); scopes nest (a body that calls another colocated function).
class colocated_body_scope {
public:
  explicit colocated_body_scope(const std::vector<device>& devices);
  ~colocated_body_scope();
  colocated_body_scope(const colocated_body_scope&) = delete;
  colocated_body_scope& operator=(const colocated_body_scope&) = delete;

private:
  const std::vector<device>* previous_devices_;
  std::optional<default_device_scope> default_device_;
};

/// Whether a colocated body or method is running on this thread.
bool inside_colocated_body() noexcept;

} // namespace am::detail
