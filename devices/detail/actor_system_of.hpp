/// The CAF actor system of a runtime, for the code above devices/ that spawns actors of its own
/// (the colocated objects' instances): it includes CAF itself, not the runtime's internals.
#pragma once

#include <caf/fwd.hpp>

namespace am::detail {

class runtime_context;

/// The actor system `context` runs on (alive until the runtime stops).
caf::actor_system& actor_system_of(runtime_context& context);

} // namespace am::detail
