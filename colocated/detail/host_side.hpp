/// The host side of a colocated call: given what to run (by name) and its inputs, run it. This is
/// the one place a call becomes code; a call for another process's devices would reach the same
/// function there, with the name and the inputs decoded from its message.
#ifndef ACTORMESH_COLOCATED_DETAIL_HOST_SIDE_HPP
#define ACTORMESH_COLOCATED_DETAIL_HOST_SIDE_HPP

#include "actormesh/actors/device_info.hpp"
#include "actormesh/colocated/detail/flat_tree.hpp"
#include "actormesh/colocated/detail/object_record.hpp"

#include <memory>
#include <string>
#include <vector>

namespace am::detail {

/// What a call runs: a registered function, or a method of a colocated object.
struct call_target {
  std::string name{};                             ///< the function's name, or the method's
  std::shared_ptr<const object_record> object{};  ///< the object (null for a function)
  /// The user-side reference a method wrapper holds (colocated/detail/object_handle.hpp): kept
  /// by wrappers, left out of the calls in flight (in_flight()), so that its end marks the user's
  /// letting go of the object.
  std::shared_ptr<const void> user_reference{};

  /// The target as a call in flight holds it: without the user-side reference.
  call_target in_flight() const { return call_target{name, object, nullptr}; }
};

/// Runs `target` on `inputs` for `devices`, on this thread (a host lane of the process owning the
/// devices): the function's body, or the method on the object's instance for that device set.
flat_tree run_on_host(const call_target& target, const flat_tree& inputs, const std::vector<device>& devices);

} // namespace am::detail

#endif // ACTORMESH_COLOCATED_DETAIL_HOST_SIDE_HPP
