/// The colocated/ floor for users: colocated CPU devices, functions and classes
/// (jax.experimental.colocated_python). doc/colocated.md is the tour.
#ifndef ACTORMESH_COLOCATED_COLOCATED_HPP
#define ACTORMESH_COLOCATED_COLOCATED_HPP

#include "actormesh/colocated/cpu_devices.hpp"
#include "actormesh/colocated/function.hpp"
#include "actormesh/colocated/object.hpp"
#include "actormesh/colocated/specialization.hpp"
#include "actormesh/colocated/specs.hpp"

#endif // ACTORMESH_COLOCATED_COLOCATED_HPP
