/// The memory of one shard on one device, seen from above the device floor. Device actors create
/// and own the concrete kinds (host memory for CPU devices, HBM for CUDA devices); arrays hold
/// reference-counted handles and shard futures resolve to them.
#ifndef ACTORMESH_ACTORS_BUFFER_HPP
#define ACTORMESH_ACTORS_BUFFER_HPP

#include "actormesh/actors/dtype.hpp"
#include "actormesh/actors/future.hpp"
#include "actormesh/actors/shape.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace am {

/// An immutable-once-produced block of device memory holding `element_count(shape)` elements.
class buffer {
public:
  /// Records the layout; the memory itself belongs to the concrete kind. Throws am::value_error for
  /// a negative extent or a byte size past int64 (checked once here, so size() and byte_size() are
  /// plain reads).
  buffer(am::dtype type, shape_t shape, int device_id);

  virtual ~buffer() = default;

  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;

  /// Element type.
  am::dtype dtype() const noexcept { return type_; }

  /// Extents of the shard.
  const shape_t& shape() const noexcept { return shape_; }

  /// The global id of the device that owns the memory.
  int device_id() const noexcept { return device_id_; }

  /// Number of elements.
  std::int64_t size() const noexcept { return size_; }

  /// Number of bytes.
  std::size_t byte_size() const noexcept { return byte_size_; }

  /// Start of the memory: a host pointer for CPU devices, a device pointer for CUDA devices.
  virtual void* data() noexcept = 0;

  /// True when `data()` can be read by the host CPU directly.
  virtual bool host_accessible() const noexcept = 0;

private:
  am::dtype type_;
  shape_t shape_;
  int device_id_;
  std::int64_t size_;
  std::size_t byte_size_;
};

/// Shared handle to a buffer; the memory returns to its device when the last handle goes.
using buffer_ref = std::shared_ptr<buffer>;

/// A shard as the caller sees it: resolved by the owning device actor once the call producing it ran.
using shard_future = future<buffer_ref>;

/// Writes a new buffer's bytes in place: `size` bytes of host memory at `destination` (a file read
/// straight into a shard, a host block copied once).
using buffer_writer = std::function<void(std::byte* destination, std::size_t size)>;

} // namespace am

#endif // ACTORMESH_ACTORS_BUFFER_HPP
