/// The global array (JAX's jax.Array): a shape, a dtype, a sharding, and one shard per device whose
/// data is a future resolved by that device's actor. Operations return at once; data crosses to the
/// caller only through `to_host`.
#ifndef ACTORMESH_SHARDING_ARRAY_HPP
#define ACTORMESH_SHARDING_ARRAY_HPP

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"
#include "actormesh/actors/dtype.hpp"
#include "actormesh/sharding/host_array.hpp"
#include "actormesh/sharding/sharding.hpp"
#include "actormesh/sharding/visualize.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace am {

namespace detail {
struct array_state;
}

/// One device's piece of an array: where it is, which block of the global array it holds, which
/// copy of that block it is, and its data (a future until the device has produced it).
struct shard {
  am::device device;
  shard_index index;
  int replica_id = 0;
  shard_future data;

  /// This shard's block copied to the host (JAX's `shard.data` then `np.asarray`): waits for the
  /// device, rethrows the error it reported. The device must be this process's (am::value_error
  /// otherwise, as shard_data).
  host_array to_host() const;
};

/// A global array. Copies share the array (like Python references): deleting one deletes all.
class array {
public:
  /// An empty handle; every query on it throws am::value_error.
  array() = default;

  /// The global shape.
  const shape_t& shape() const;

  /// The element type.
  am::dtype dtype() const;

  /// Number of dimensions.
  std::int64_t ndim() const { return static_cast<std::int64_t>(shape().size()); }

  /// Number of elements.
  std::int64_t size() const { return element_count(shape()); }

  /// How the array is laid out over devices.
  const sharding_ptr& sharding() const;

  /// The shards on devices of this process (replicas included), in the order of the sharding's
  /// devices (a mesh's devices as laid out, not their ids), as JAX lists them. A copy: the array
  /// may be deleted by another thread while the caller looks at it.
  std::vector<shard> addressable_shards() const;

  /// True when every device of the sharding belongs to this process (always in local mode):
  /// only then can to_host() fetch the whole array.
  bool is_fully_addressable() const;

  /// Waits until every shard of this process has been computed; rethrows the first error a
  /// device reported.
  void block_until_ready() const;

  /// Like block_until_ready, but throws am::timeout_error after `timeout`.
  void block_until_ready(std::chrono::milliseconds timeout) const;

  /// Copies the whole array to the host (waits for the shards). In a cluster every block must have
  /// a copy on this process's devices (a fully addressable or a fully replicated array, as in JAX);
  /// otherwise it throws am::runtime_error with JAX's wording.
  host_array to_host() const;

  /// Frees the shards now (JAX's `x.delete()`); later use raises "Array has been deleted".
  void delete_();

  /// True after delete_().
  bool is_deleted() const;

  /// True for a value being traced by jit (it has no data).
  bool is_tracer() const;

  /// `float32[8,2]`: dtype and shape, as JAX prints an abstract value.
  std::string aval_string() const;

  /// `Array(float32[8,2], sharding=NamedSharding(...))`, without the data.
  std::string to_string() const;

  /// The shared state, for the library's own use.
  const std::shared_ptr<detail::array_state>& state() const noexcept { return state_; }

  /// Wraps a state; for the library's own use.
  explicit array(std::shared_ptr<detail::array_state> state) : state_(std::move(state)) {}

private:
  const detail::array_state& checked() const;

  std::shared_ptr<detail::array_state> state_;
};

/// True when `a` and `b` are the same array, copies of one handle (Python's `a is b` on jax.Arrays):
/// deleting one deletes the other. `device_put(x, x.sharding())` is x itself; an operation's
/// result never is. Two empty handles are the same.
bool is_same(const array& a, const array& b) noexcept;

/// The single-device array holding one shard's data (JAX's `shard.data`): shares the shard's
/// buffer, so `shard_data(x, s).to_host()` copies only that block. The shard must be one of x's
/// addressable shards.
array shard_data(const array& x, const shard& s);

/// Places host data on devices as laid out by `s`: each device receives only its block. In a
/// cluster, each process places only its own devices' blocks (every process passes the same data,
/// as in JAX).
array device_put(const host_array& data, const sharding_ptr& s);

/// Places host data on one device.
array device_put(const host_array& data, const device& d);

/// Places host data on the default device (am::default_device: this process's first, or the
/// colocated call's inside its body), as JAX's `jax.device_put(x)`; what jit, vmap and grad do with
/// a host array or a scalar argument.
array device_put(const host_array& data);

/// Reshards: each device receives only the slices it needs, from the devices that hold them.
/// Returns `x` itself for the same sharding object; for an equivalent one (every device holds the
/// same block), an array with the requested sharding that shares x's buffers.
array device_put(const array& x, const sharding_ptr& s);

/// Moves an array onto one device.
array device_put(const array& x, const device& d);

/// The picture of the array's sharding (rank 1 and 2), as jax.debug.visualize_array_sharding.
std::string visualize_array_sharding(const array& x, const visualize_options& options = {});

} // namespace am

#endif // ACTORMESH_SHARDING_ARRAY_HPP
