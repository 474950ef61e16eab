/// JAX's order for a colocated object's end: the thread that lets go of the last wrapper sees the
/// instances destroyed before its next colocated call returns (after the calls it had issued to
/// them). That thread owes the destruction (a future per object), and its next call settles the
/// debt first. Internal.
#pragma once

#include "actormesh/actors/future.hpp"

namespace am::detail {

/// Notes that this thread let go of an object whose instances are destroyed when `destroyed`
/// resolves.
void owe_destruction(future<void> destroyed);

/// Waits for every destruction this thread owes (each bounded; one that takes longer is logged and
/// forgotten). Inside a colocated body it waits for nothing: the destruction may wait for calls
/// queued behind that body.
void settle_destructions();

} // namespace am::detail
