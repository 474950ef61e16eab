#include "actormesh/sharding/random.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/float16.hpp"
#include "devices/detail/random_counter.hpp"
#include "actormesh/sharding/detail/graph.hpp"
#include "actormesh/sharding/detail/trace.hpp"
#include "actormesh/sharding/ops.hpp"

#include <bit>
#include <string>

namespace am {

namespace {

array random_values(opcode op, prng_key key, shape_t shape, const sharding_ptr& s, am::dtype type,
                    std::vector<std::int64_t> range = {}) {
  if (!s)
    throw value_error("random: no sharding given");
  s->check_compatible(shape);
  detail::node n;
  n.kind = detail::node_kind::random;
  n.op = op;
  n.shape = std::move(shape);
  n.type = type;
  n.layout = s;
  n.key = key.bits;
  n.attrs = std::move(range);
  return detail::apply(std::move(n), {});
}

void check_float(const char* what, const char* kinds, am::dtype type) {
  if (!is_floating(type))
    throw value_error(std::string("dtype argument to `") + what + "` must be a " + kinds + " dtype, got "
                      + std::string(name(type)));
}

/// maxval - minval as `type` computes it from the two values rounded to `type`.
template <class T>
double span_in(double minval, double maxval) {
  return static_cast<double>(T(T(maxval) - T(minval)));
}

} // namespace

prng_key random_key(std::int64_t seed) {
  return prng_key{static_cast<std::uint64_t>(seed)};
}

prng_key wrap_key_data(std::uint32_t word0, std::uint32_t word1) {
  return prng_key{(static_cast<std::uint64_t>(word0) << 32) | word1};
}

std::vector<prng_key> split(prng_key key, int n) {
  if (n < 0)
    throw value_error("split: the number of keys must be non-negative, got " + std::to_string(n));
  std::vector<prng_key> keys;
  keys.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    keys.push_back({detail::rng::split_key(key.bits, static_cast<std::uint64_t>(i))});
  return keys;
}

prng_key fold_in(prng_key key, std::int64_t data) {
  if (data < 0 || data > 0xFFFFFFFFll)
    throw value_error("fold_in: data " + std::to_string(data) + " is out of bounds for uint32");
  return prng_key{detail::rng::fold_in_key(key.bits, static_cast<std::uint32_t>(data))};
}

array bits(prng_key key, shape_t shape, const sharding_ptr& s, am::dtype type) {
  if (type != am::dtype::uint8 && type != am::dtype::int32 && type != am::dtype::int64)
    throw value_error("dtype argument to `bits` must be an unsigned int dtype (uint8, or int32 / int64 "
                      "holding uint32 / uint64 bits), got " + std::string(name(type)));
  return random_values(opcode::random_uniform, key, std::move(shape), s, type);
}

array normal(prng_key key, shape_t shape, const sharding_ptr& s, am::dtype type) {
  check_float("normal", "float or complex", type);
  return random_values(opcode::random_normal, key, std::move(shape), s, type);
}

array uniform(prng_key key, shape_t shape, const sharding_ptr& s, am::dtype type, double minval, double maxval) {
  check_float("uniform", "float", type);
  if (minval == 0.0 && maxval == 1.0) // u * 1 + 0 and max(0, u) are u itself
    return random_values(opcode::random_uniform, key, std::move(shape), s, type);
  double span = 0, low = 0;
  switch (type) {
    case am::dtype::float16: span = span_in<float16>(minval, maxval); low = double(float16(minval)); break;
    case am::dtype::bfloat16: span = span_in<bfloat16>(minval, maxval); low = double(bfloat16(minval)); break;
    case am::dtype::float32: span = span_in<float>(minval, maxval); low = double(float(minval)); break;
    default: span = maxval - minval; low = minval; break;
  }
  return random_values(opcode::random_uniform, key, std::move(shape), s, type,
                       {std::bit_cast<std::int64_t>(low), std::bit_cast<std::int64_t>(span)});
}

} // namespace am
