/// The CAF messages of single-controller mode: built-in types only (an atom and a byte string of
/// remote_wire), so they cross the network without type registration. Internal.
#pragma once

#include <caf/atom.hpp>

namespace am::detail::remote {

/// controller -> a worker's call server: (request bytes); the sender is the controller's reply sink.
using call_atom = caf::atom_constant<caf::atom("am_rcall")>;

/// call server -> the controller's reply sink: (reply bytes).
using done_atom = caf::atom_constant<caf::atom("am_rdone")>;

/// The worker's runtime -> its call server: the devices are up, requests can run.
using ready_atom = caf::atom_constant<caf::atom("am_rready")>;

} // namespace am::detail::remote
