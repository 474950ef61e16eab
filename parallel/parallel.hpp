/// The transformations above the array layer: grad and value_and_grad, vmap, pmap and the
/// collectives used inside pmap (JAX's jax.grad, jax.vmap, jax.pmap and jax.lax collectives).
#ifndef ACTORMESH_PARALLEL_PARALLEL_HPP
#define ACTORMESH_PARALLEL_PARALLEL_HPP

#include "actormesh/parallel/axis_spec.hpp"
#include "actormesh/parallel/collectives.hpp"
#include "actormesh/parallel/grad.hpp"
#include "actormesh/parallel/pmap.hpp"
#include "actormesh/parallel/vmap.hpp"

#endif // ACTORMESH_PARALLEL_PARALLEL_HPP
