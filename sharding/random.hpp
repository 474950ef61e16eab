/// Random numbers that do not depend on the sharding: the value at each global index depends only on
/// the key and the index, so any sharding of the same call gives the same array.
#pragma once

#include "sharding/array.hpp"

#include <cstdint>
#include <vector>

namespace am {

/// A random key (JAX's PRNGKey), a plain value on the host.
struct prng_key {
  std::uint64_t bits = 0;
  friend bool operator==(const prng_key&, const prng_key&) = default;
};

/// The key for a seed.
prng_key random_key(std::uint64_t seed);

/// `n` new independent keys derived from `key`.
std::vector<prng_key> split(prng_key key, int n = 2);

/// Standard normal values of `shape` laid out by `s`.
array normal(prng_key key, shape_t shape, const sharding_ptr& s, am::dtype type = am::dtype::float32);

/// Uniform values in [minval, maxval) of `shape` laid out by `s`.
array uniform(prng_key key, shape_t shape, const sharding_ptr& s, am::dtype type = am::dtype::float32,
              double minval = 0.0, double maxval = 1.0);

} // namespace am
