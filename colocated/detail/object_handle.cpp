#include "actormesh/colocated/detail/object_handle.hpp"

#include "colocated/detail/pending_destructions.hpp"

namespace am::detail {

user_reference::~user_reference() {
  try {
    owe_destruction(record_->when_destroyed()); // before letting go: the record may end right here
  } catch (...) {
    // out of memory: the destruction still happens, only unawaited
  }
}

std::shared_ptr<const function_core> object_handle::method_core(const std::string& name) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto& core = cores_[name];
  if (!core)
    core = std::make_shared<const function_core>(call_target{name, record_, user_}, specialization{});
  return core;
}

} // namespace am::detail
