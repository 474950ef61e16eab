#include "colocated/detail/body_scope.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/colocated/cpu_devices.hpp"

namespace am {

namespace detail {

namespace {

thread_local int bodies_running = 0;
thread_local const std::vector<device>* running_call_devices = nullptr;

} // namespace

colocated_body_scope::colocated_body_scope(const std::vector<device>& devices) : previous_devices_(running_call_devices) {
  ++bodies_running;
  running_call_devices = &devices;
  if (!devices.empty())
    default_device_.emplace(devices.front());
}

colocated_body_scope::~colocated_body_scope() {
  default_device_.reset();
  running_call_devices = previous_devices_;
  --bodies_running;
}

bool inside_colocated_body() noexcept { return bodies_running > 0; }

} // namespace detail

std::vector<device> colocated_devices() {
  if (detail::running_call_devices == nullptr)
    throw value_error("colocated_devices: called outside a colocated function or method");
  return *detail::running_call_devices;
}

} // namespace am
