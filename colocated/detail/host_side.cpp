#include "actormesh/colocated/detail/host_side.hpp"

#include "colocated/detail/object_store.hpp"
#include "colocated/detail/body_scope.hpp"
#include "actormesh/colocated/detail/registry.hpp"
#include "observability/trace_hooks.hpp"

namespace am::detail {

flat_tree run_on_host(const call_target& target, const flat_tree& inputs, const std::vector<device>& devices) {
  auto traced = observability::colocated_span(target.name, "colocated body");
  if (!target.object) {
    colocated_body_scope running(devices);
    return find_function(target.name)->body(inputs);
  }
  auto method = find_method(target.object->class_name, target.name);
  return run_on_instance(*target.object, devices,
                         [method, inputs](void* instance) { return method->body(instance, inputs); });
}

} // namespace am::detail
