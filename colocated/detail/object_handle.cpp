#include "actormesh/colocated/detail/object_handle.hpp"

namespace am::detail {

std::shared_ptr<const function_core> object_handle::method_core(const std::string& name) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto& core = cores_[name];
  if (!core)
    core = std::make_shared<const function_core>(call_target{name, record_}, specialization{});
  return core;
}

} // namespace am::detail
