#include "devices/collectives/shard_transfers.hpp"

#include "actors/detail/log.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/calls.hpp"
#include "actormesh/devices/collectives/communicator.hpp"
#include "devices/detail/runtime_impl.hpp"
#include "devices/remote/remote_wire.hpp"
#include "observability/trace_hooks.hpp"
#include "observability/stats_counters.hpp"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <pthread.h>

namespace am::detail {

/// One direction (process `source` to process `target`): its communicator, created by the worker
/// on its first task (creation is collective with the peer, which does the same), and the worker
/// that runs the direction's tasks in order.
struct shard_transfers::lane {
  runtime_impl& rt;
  int source = 0;
  int target = 0;
  std::mutex mutex;
  std::condition_variable wake;
  /// A task gets the communicator, or the error that made it impossible (creation failed: a peer
  /// died or never came), which a receive hands on to its shard.
  using task_type = std::function<void(communicator*, int peer_rank, const std::exception_ptr& failure)>;
  std::deque<task_type> tasks;
  bool stopping = false;
  bool running = false; ///< a task is running
  std::condition_variable idle;
  std::thread worker;

  lane(runtime_impl& runtime, int from, int to) : rt(runtime), source(from), target(to) {
    worker = std::thread([this] { run(); });
    const std::string name = "am-xfer " + std::to_string(from) + ">" + std::to_string(to);
    ::pthread_setname_np(worker.native_handle(), name.substr(0, 15).c_str());
  }

  ~lane() {
    {
      std::lock_guard<std::mutex> guard(mutex);
      stopping = true;
    }
    wake.notify_all();
    worker.join();
  }

  void post(task_type task) {
    {
      std::lock_guard<std::mutex> guard(mutex);
      tasks.push_back(std::move(task));
    }
    wake.notify_one();
  }

  void run() {
    std::unique_ptr<communicator> comm;
    std::exception_ptr failure;
    std::vector<int> processes{std::min(source, target), std::max(source, target)};
    int me = rt.process_index();
    int peer_rank = processes[0] == me ? 1 : 0;
    while (true) {
      task_type task;
      {
        std::unique_lock<std::mutex> guard(mutex);
        wake.wait(guard, [&] { return stopping || !tasks.empty(); });
        if (tasks.empty())
          return; // stopping: dropped tasks fail their promises as they are destroyed
        task = std::move(tasks.front());
        tasks.pop_front();
        running = true;
      }
      if (!comm && !failure) {
        try {
          comm = std::make_unique<communicator>(rt.cluster(), processes,
                                                "am.shards." + std::to_string(source) + ">" + std::to_string(target),
                                                rt.data_plane_address(), rt.config().collective_timeout);
        } catch (...) {
          failure = std::current_exception();
        }
      }
      try {
        task(comm.get(), peer_rank, failure);
      } catch (const std::exception& e) {
        log(log_level::warning, "shard transfer {} -> {} failed: {}", source, target, e.what());
      }
      task = nullptr; // what it holds goes before the lane counts as idle
      std::lock_guard<std::mutex> guard(mutex);
      running = false;
      if (tasks.empty())
        idle.notify_all();
    }
  }

  /// Waits until every task posted so far has run, or `deadline`; true when idle.
  bool wait_idle(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> guard(mutex);
    return idle.wait_until(guard, deadline, [&] { return tasks.empty() && !running; });
  }
};

struct shard_transfers::impl {
  explicit impl(runtime_impl& r) : rt(r) {}
  runtime_impl& rt;
  std::mutex mutex;
  std::map<std::pair<int, int>, std::unique_ptr<lane>> lanes;

  /// Waits (until `deadline`) for this process's sends to finish: the other processes may still
  /// need them after this one stopped wanting anything (runtime_impl::add_stop_drain).
  void drain_sends(std::chrono::steady_clock::time_point deadline) {
    std::vector<lane*> sending;
    {
      std::lock_guard<std::mutex> guard(mutex);
      for (auto& [direction, l] : lanes)
        if (direction.first == rt.process_index())
          sending.push_back(l.get());
    }
    for (auto* l : sending)
      if (!l->wait_idle(deadline))
        log(log_level::warning, "stopping with shards still being sent to process {} (the shutdown timeout passed)",
            l->target);
  }

  lane& lane_for(int from, int to) {
    std::lock_guard<std::mutex> guard(mutex);
    auto& l = lanes[{from, to}];
    if (!l)
      l = std::make_unique<lane>(rt, from, to);
    return *l;
  }
};

/// The runtime's transfers between processes.
const service_key<shard_transfers> transfers_key{"shard transfers"};

std::shared_ptr<shard_transfers> shard_transfers::of(runtime_impl& rt) {
  return rt.service(transfers_key, [&rt] { return std::make_shared<shard_transfers>(rt); });
}

shard_transfers::shard_transfers(runtime_impl& rt) : impl_(std::make_unique<impl>(rt)) {
  // The service goes only after the drains ran (runtime_impl::stop), so the pointer stays good.
  rt.add_stop_drain([state = impl_.get()](std::chrono::steady_clock::time_point deadline) { state->drain_sends(deadline); });
}

shard_transfers::~shard_transfers() = default;

namespace {

/// What precedes every transfer's bytes: whether the value could be produced, and how many bytes
/// follow (the value's, or its error as a remote_wire reply). A value that failed on the sending
/// side so fails the receiving side at once instead of leaving it waiting for the timeout.
struct transfer_header {
  std::uint64_t failed = 0;
  std::uint64_t bytes = 0;
};

/// Sends `bytes` after an ok header.
void send_value(communicator& comm, int peer, std::uint32_t tag, const std::vector<std::byte>& bytes) {
  transfer_header h{0, bytes.size()};
  comm.send(&h, sizeof h, dtype::uint8, peer, tag);
  stats::transfer_in_flight flight(bytes.size(), true);
  comm.send(bytes.data(), bytes.size(), dtype::uint8, peer, tag);
  flight.done();
}

/// Sends `error` (the value's) after a failed header.
void send_error(communicator& comm, int peer, std::uint32_t tag, const std::exception_ptr& error) {
  auto text = remote::encode(remote::error_reply(0, error));
  transfer_header h{1, text.size()};
  comm.send(&h, sizeof h, dtype::uint8, peer, tag);
  comm.send(text.data(), text.size(), dtype::uint8, peer, tag);
}

/// The most bytes an error's text may have.
constexpr std::uint64_t max_error_bytes = 1u << 20;

} // namespace

void shard_transfers::send(const device& from, shard_future value, int to, std::uint32_t tag) {
  auto& l = impl_->lane_for(impl_->rt.process_index(), to);
  l.post([from, value, to, tag](communicator* comm, int peer, const std::exception_ptr& failure) {
    auto traced = observability::transfer_span("send shard", to);
    try {
      if (failure)
        std::rethrow_exception(failure);
      value.wait();
      // The value's bytes, or why there are none (the value failed, or reading it did: this
      // runtime stopped meanwhile). Either way the receiver hears of it at once instead of waiting
      // out its timeout for bytes that will not come.
      std::exception_ptr error = value.shared_state()->error();
      std::vector<std::byte> bytes;
      if (!error) {
        try {
          bytes = fetch(from, value).get();
        } catch (...) {
          error = std::current_exception();
        }
      }
      if (error) {
        send_error(*comm, peer, tag, error);
        return;
      }
      send_value(*comm, peer, tag, bytes);
    } catch (const std::exception& e) {
      // The receiving process sees its own error (the transfer broke).
      log(log_level::warning, "sending a shard of {} to process {} failed: {}", to_string(from), to, e.what());
      throw;
    }
  });
}

void shard_transfers::send_bytes(std::shared_ptr<const std::vector<std::byte>> bytes, int to, std::uint32_t tag) {
  auto& l = impl_->lane_for(impl_->rt.process_index(), to);
  l.post([bytes, to, tag](communicator* comm, int peer, const std::exception_ptr& failure) {
    auto traced = observability::transfer_span("send bytes", to);
    traced.arg("bytes", static_cast<std::int64_t>(bytes->size()));
    try {
      if (failure)
        std::rethrow_exception(failure);
      send_value(*comm, peer, tag, *bytes);
    } catch (const std::exception& e) {
      log(log_level::warning, "sending {} bytes to process {} failed: {}", bytes->size(), to, e.what());
      throw;
    }
  });
}

void shard_transfers::post_receive(int from, std::size_t size, std::uint32_t tag,
                                   std::function<void(std::vector<std::byte>&&)> take,
                                   std::function<void(std::exception_ptr)> fail) {
  auto& l = impl_->lane_for(from, impl_->rt.process_index());
  l.post([from, size, tag, take = std::move(take), fail = std::move(fail)](communicator* comm, int peer,
                                                                        const std::exception_ptr& failure) {
    auto traced = observability::transfer_span("receive", from);
    traced.arg("bytes", static_cast<std::int64_t>(size));
    std::vector<std::byte> bytes;
    try {
      if (failure)
        std::rethrow_exception(failure);
      transfer_header h;
      comm->recv(&h, sizeof h, dtype::uint8, peer, tag);
      if (h.failed != 0) {
        if (h.bytes > max_error_bytes)
          throw value_error("A shard transfer's error of " + std::to_string(h.bytes) + " bytes exceeds the limit");
        std::string text(static_cast<std::size_t>(h.bytes), '\0');
        comm->recv(text.data(), text.size(), dtype::uint8, peer, tag);
        std::rethrow_exception(remote::error_of(remote::decode_reply(text)));
      }
      if (h.bytes != size)
        throw desync_error("A shard transfer from process " + std::to_string(from) + " carries " + std::to_string(h.bytes)
                           + " bytes where " + std::to_string(size) + " were expected (the processes issued their "
                           "transfers in different orders)");
      bytes.resize(size);
      stats::transfer_in_flight flight(size, false);
      comm->recv(bytes.data(), bytes.size(), dtype::uint8, peer, tag);
      flight.done();
    } catch (...) {
      fail(std::current_exception());
      return;
    }
    take(std::move(bytes));
  });
}

void shard_transfers::receive_bytes(int from, std::size_t size, std::uint32_t tag,
                                    promise<std::vector<std::byte>> into) {
  post_receive(
    from, size, tag, [into](std::vector<std::byte>&& bytes) { into.set_value(std::move(bytes)); },
    [into](std::exception_ptr e) { into.set_error(std::move(e)); });
}

shard_future shard_transfers::receive(int from, const device& to, value_type type, std::uint32_t tag) {
  promise<buffer_ref> result;
  auto out = result.get_future();
  auto size = static_cast<std::size_t>(element_count(type.shape)) * size_of(type.dtype);
  post_receive(
    from, size, tag,
    [result, to, type](std::vector<std::byte>&& bytes) {
      try {
        auto uploaded = upload(to, std::move(bytes), type);
        uploaded.on_ready([result, uploaded] {
          try {
            result.set_value(uploaded.get());
          } catch (...) {
            result.set_error(std::current_exception());
          }
        });
      } catch (...) {
        result.set_error(std::current_exception());
      }
    },
    [result](std::exception_ptr e) { result.set_error(std::move(e)); });
  return out;
}

} // namespace am::detail
