#include "actormesh/devices/runtime.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/detail/default_device_scope.hpp"

namespace am {

namespace {

thread_local std::optional<device> scoped_default;

} // namespace

device default_device() {
  if (scoped_default)
    return *scoped_default;
  const auto local = local_devices();
  if (local.empty())
    throw runtime_error("default_device: this process has no devices (is the runtime started?)");
  return local.front();
}

namespace detail {

default_device_scope::default_device_scope(const device& d) noexcept : previous_(scoped_default) { scoped_default = d; }

default_device_scope::~default_device_scope() { scoped_default = previous_; }

} // namespace detail

} // namespace am
