/// Moving shards between processes (multi-controller): when a plan needs a value computed on
/// another process's device, the producing process sends it and the consuming process receives
/// it onto its device. Both run the same plan, so both issue the same transfers in the same order;
/// the bytes go through the collectives engine (Gloo send/recv over one two-process communicator
/// per direction), on a worker thread per direction, never on a user thread or an actor's handler.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"
#include "actormesh/actors/program.hpp"

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

namespace am::detail {

class runtime_impl;

/// The transfers of one runtime. Thread-safe; the transfers of one direction run in the order they
/// were issued, which must be the same order on both processes (one program order, as in JAX).
class shard_transfers {
public:
  /// The runtime's transfer service (created on first use).
  static std::shared_ptr<shard_transfers> of(runtime_impl& rt);

  explicit shard_transfers(runtime_impl& rt);
  ~shard_transfers();

  shard_transfers(const shard_transfers&) = delete;
  shard_transfers& operator=(const shard_transfers&) = delete;

  /// Sends `value` (a shard of local device `from`) to process `to` once it is computed. `tag`
  /// names the value the same way on both processes (derived from the plan), so that transfers
  /// issued in different orders fail with a desync error instead of swapping equal-sized values.
  void send(const device& from, shard_future value, int to, std::uint32_t tag);

  /// A shard on local device `to` holding the value process `from` sends with `tag` (of type
  /// `type`).
  shard_future receive(int from, const device& to, value_type type, std::uint32_t tag);

  /// Sends host bytes to process `to` (which receives them with `receive` or `receive_bytes`).
  void send_bytes(std::shared_ptr<const std::vector<std::byte>> bytes, int to, std::uint32_t tag);

  /// Resolves `into` with the `size` bytes process `from` sends with `tag`, in host memory.
  void receive_bytes(int from, std::size_t size, std::uint32_t tag, promise<std::vector<std::byte>> into);

private:
  /// Posts a receive of `size` bytes from process `from`: `take` gets them, or `fail` the error
  /// (on the direction's worker thread).
  void post_receive(int from, std::size_t size, std::uint32_t tag, std::function<void(std::vector<std::byte>&&)> take,
                    std::function<void(std::exception_ptr)> fail);

  struct lane;
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace am::detail
