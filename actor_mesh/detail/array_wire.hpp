/// How an am::array travels to or from an actor in another process (actors/value_wire.hpp): as
/// its data (the host array to_host gives, so the sender must be able to read all of it), put
/// back on a device where it arrives: an actor's argument on the actor's first device (its
/// point's devices), an answer on the receiving process's first local device. Internal.
#ifndef ACTORMESH_ACTOR_MESH_DETAIL_ARRAY_WIRE_HPP
#define ACTORMESH_ACTOR_MESH_DETAIL_ARRAY_WIRE_HPP

#include "actormesh/actor_mesh/this_actor.hpp"
#include "actormesh/actors/value_wire.hpp"
#include "actormesh/devices/runtime.hpp"
#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/detail/host_array_wire.hpp"

namespace am::detail {

template <>
struct wire_value<array> {
  static void write(wire_writer& w, const array& a) { wire_value<host_array>::write(w, a.to_host()); }

  static array read(wire_reader& r) {
    auto data = wire_value<host_array>::read(r);
    if (in_actor() && !this_actor().point.devices.empty())
      return device_put(data, this_actor().point.devices.front());
    auto here = local_devices();
    if (here.empty())
      throw runtime_error("an array arrived from another process, and this process has no device to put it on");
    return device_put(data, here.front());
  }
};

} // namespace am::detail

#endif // ACTORMESH_ACTOR_MESH_DETAIL_ARRAY_WIRE_HPP
