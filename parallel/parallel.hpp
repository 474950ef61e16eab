/// The transformations above the array layer: grad and value_and_grad, vmap, pmap and the
/// collectives used inside pmap (JAX's jax.grad, jax.vmap, jax.pmap and jax.lax collectives).
#pragma once

#include "parallel/axis_spec.hpp"
#include "parallel/collectives.hpp"
#include "parallel/grad.hpp"
#include "parallel/pmap.hpp"
#include "parallel/vmap.hpp"
