/// Shardings as bytes, for the messages between processes (a colocated call's specs travel to the
/// worker that runs it): the kind, the devices by id, and the kind's own fields. Decoding checks
/// every field and rebuilds the sharding through its public constructor, so a decoded sharding
/// passes the same checks as one a user made. Internal.
#pragma once

#include "actormesh/actors/wire_codec.hpp"
#include "actormesh/sharding/sharding.hpp"

namespace am::detail {

/// Appends `s` (named, positional or single-device) to `w`.
void write_sharding(wire_writer& w, const sharding& s);

/// The cluster's devices of `ids`, in that order (the current runtime's); throws am::value_error,
/// starting with `what`, for an id the cluster lacks.
std::vector<device> devices_by_id(const std::vector<int>& ids, const std::string& what);

/// Reads a sharding written by write_sharding; devices are looked up by id in the current
/// runtime. Throws am::value_error for bytes that do not describe a sharding of this cluster.
sharding_ptr read_sharding(wire_reader& r);

} // namespace am::detail
