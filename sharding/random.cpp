#include "sharding/random.hpp"

#include "actors/errors.hpp"
#include "devices/detail/random_counter.hpp"
#include "sharding/detail/graph.hpp"
#include "sharding/detail/trace.hpp"
#include "sharding/ops.hpp"

namespace am {

namespace {

array random_values(opcode op, prng_key key, shape_t shape, const sharding_ptr& s, am::dtype type) {
  if (!s)
    throw value_error("random: no sharding given");
  if (!is_floating(type))
    throw value_error(std::string("dtype argument to `") + (op == opcode::random_normal ? "normal" : "uniform")
                      + "` must be a float dtype, got " + std::string(name(type)));
  s->check_compatible(shape);
  detail::node n;
  n.kind = detail::node_kind::random;
  n.op = op;
  n.shape = std::move(shape);
  n.type = type;
  n.layout = s;
  n.key = key.bits;
  return detail::apply(std::move(n), {});
}

} // namespace

prng_key random_key(std::uint64_t seed) {
  return prng_key{detail::split_key(seed, 0x5eed)};
}

std::vector<prng_key> split(prng_key key, int n) {
  if (n < 0)
    throw value_error("split: the number of keys must be non-negative");
  std::vector<prng_key> keys;
  for (int i = 0; i < n; ++i)
    keys.push_back({detail::split_key(key.bits, static_cast<std::uint64_t>(i))});
  return keys;
}

array normal(prng_key key, shape_t shape, const sharding_ptr& s, am::dtype type) {
  return random_values(opcode::random_normal, key, std::move(shape), s, type);
}

array uniform(prng_key key, shape_t shape, const sharding_ptr& s, am::dtype type, double minval, double maxval) {
  auto u = random_values(opcode::random_uniform, key, std::move(shape), s, type);
  if (minval == 0.0 && maxval == 1.0)
    return u;
  return u * scalar(maxval - minval) + scalar(minval);
}

} // namespace am
