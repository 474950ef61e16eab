/// The colocated/ floor for users: colocated CPU devices, functions and classes
/// (jax.experimental.colocated_python). doc/colocated.md is the tour.
#pragma once

#include "colocated/cpu_devices.hpp"
#include "colocated/function.hpp"
#include "colocated/object.hpp"
#include "colocated/specialization.hpp"
#include "colocated/specs.hpp"
