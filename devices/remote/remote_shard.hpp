/// A shard that lives in a worker process, as the controller holds it (single-controller mode):
/// its future knows the worker and the handle from the moment the call is issued, so later calls
/// can name it before it is computed; the buffer it resolves to holds no memory here. When the
/// controller lets go of it (the last future and buffer gone), the worker is told to free it.
/// Internal.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/future.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

namespace am::detail::remote {

/// Where a worker's value is: the process and the handle the controller gave it.
struct location {
  int process = 0;
  std::uint64_t handle = 0;
  std::uint64_t bytes = 0; ///< the value's size
};

/// Who frees handles on the workers (the controller's link); called from any thread.
class handle_releaser {
public:
  virtual ~handle_releaser() = default;
  virtual void release(const location& where) noexcept = 0;
};

/// The future state of a worker's shard.
class shard_state final : public future_state<buffer_ref> {
public:
  shard_state(location where, std::weak_ptr<handle_releaser> releaser)
      : where_(where), releaser_(std::move(releaser)) {}

  /// Frees the handle unless a buffer took that job over (the value arrived).
  ~shard_state() override;

  const location& where() const noexcept { return where_; }

  /// Marks that a buffer now owns the handle (called just before the value is set).
  void hand_over() noexcept { handed_over_.store(true, std::memory_order_release); }

private:
  location where_;
  std::weak_ptr<handle_releaser> releaser_;
  std::atomic<bool> handed_over_{false};
};

/// A worker's computed shard: layout here, memory there.
class remote_buffer final : public buffer {
public:
  remote_buffer(am::dtype type, shape_t shape, int device_id, location where,
                std::weak_ptr<handle_releaser> releaser)
      : buffer(type, std::move(shape), device_id), where_(where), releaser_(std::move(releaser)) {}

  /// Frees the handle on the worker.
  ~remote_buffer() override;

  void* data() noexcept override { return nullptr; }
  bool host_accessible() const noexcept override { return false; }
  const location& where() const noexcept { return where_; }

private:
  location where_;
  std::weak_ptr<handle_releaser> releaser_;
};

/// Where `f` lives, when it is a worker's shard (issued by this controller), else nothing.
std::optional<location> location_of(const shard_future& f);

} // namespace am::detail::remote
