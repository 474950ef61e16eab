/// Random numbers as jax.random draws them (threefry2x32, JAX's default partitionable layout): the
/// same key gives JAX's values bit for bit, and the value at each global index depends only on the
/// key and the index, so any sharding of the same call gives the same array.
#ifndef ACTORMESH_SHARDING_RANDOM_HPP
#define ACTORMESH_SHARDING_RANDOM_HPP

#include "actormesh/sharding/array.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace am {

/// A random key (jax.random.key / PRNGKey), a plain value on the host: JAX's two uint32 words
/// (jax.random.key_data) packed as (word 0 << 32) | word 1.
struct prng_key {
  std::uint64_t bits = 0;
  /// JAX's key data: the two uint32 words.
  std::array<std::uint32_t, 2> data() const {
    return {static_cast<std::uint32_t>(bits >> 32), static_cast<std::uint32_t>(bits)};
  }
  friend bool operator==(const prng_key&, const prng_key&) = default;
};

/// jax.random.key(seed): the words are the seed's high and low 32 bits (its two's complement for a
/// negative seed, as JAX with 64-bit types enabled gives).
prng_key random_key(std::int64_t seed);

/// jax.random.wrap_key_data: the key with these two words.
prng_key wrap_key_data(std::uint32_t word0, std::uint32_t word1);

/// jax.random.split(key, n): `n` new independent keys.
std::vector<prng_key> split(prng_key key, int n = 2);

/// jax.random.fold_in(key, data): a new key from `key` and an integer in [0, 2**32).
prng_key fold_in(prng_key key, std::int64_t data);

/// jax.random.bits: random bits of `shape` laid out by `s`. `type` uint8 gives JAX's uint8 values;
/// int32 and int64 hold the bits of JAX's uint32 and uint64 values (actormesh has no wider unsigned
/// dtype), so `bits(k, sh, s, dtype::int32)` has the bit patterns of `jax.random.bits(k, sh, uint32)`.
array bits(prng_key key, shape_t shape, const sharding_ptr& s, am::dtype type = am::dtype::int32);

/// jax.random.normal: standard normal values of `shape` laid out by `s`.
array normal(prng_key key, shape_t shape, const sharding_ptr& s, am::dtype type = am::dtype::float32);

/// jax.random.uniform: values in [minval, maxval) of `shape` laid out by `s`, computed as JAX does
/// (minval and maxval rounded to `type`, then max(minval, u * (maxval - minval) + minval)).
array uniform(prng_key key, shape_t shape, const sharding_ptr& s, am::dtype type = am::dtype::float32,
              double minval = 0.0, double maxval = 1.0);

} // namespace am

#endif // ACTORMESH_SHARDING_RANDOM_HPP
