/// How an am::array travels to another process (actors/value_wire.hpp): as its data (the host
/// array to_host gives, so the sender must be able to read all of it), put back where it arrives on
/// the default device there (am::default_device: an actor's first device inside its endpoints, a
/// colocated call's first device while its object is built or its body runs, else the process's
/// first). Used by actor messages and colocated constructor arguments. Internal.
#ifndef ACTORMESH_SHARDING_DETAIL_ARRAY_WIRE_HPP
#define ACTORMESH_SHARDING_DETAIL_ARRAY_WIRE_HPP

#include "actormesh/actors/value_wire.hpp"
#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/detail/host_array_wire.hpp"

namespace am::detail {

template <>
struct wire_value<array> {
  static void write(wire_writer& w, const array& a) { wire_value<host_array>::write(w, a.to_host()); }

  static array read(wire_reader& r) { return device_put(wire_value<host_array>::read(r)); }
};

} // namespace am::detail

#endif // ACTORMESH_SHARDING_DETAIL_ARRAY_WIRE_HPP
