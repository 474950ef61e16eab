#include "devices/collectives/gloo_engine.hpp"

#include "actormesh/actors/errors.hpp"
#include "actors/cluster_services.hpp"
#include "cluster/guard/cluster_secret.hpp"
#include "devices/collectives/authenticated_transport.hpp"
#include "actormesh/devices/collectives/block_split.hpp"
#include "devices/collectives/gloo_store.hpp"
#include "devices/collectives/reduce_kernels.hpp"

#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <new>
#include <vector>

namespace am::detail {

namespace {

/// Whether an all-reduce of `bytes` per rank over `ranks` should take Gloo's bcube algorithm
/// (log-many exchange rounds) rather than its ring (2(ranks - 1) steps of bytes / ranks each):
/// when the ring's steps are small, its step count, each waiting for a neighbour to be scheduled,
/// is the cost. Measured on 2 cores (doc/performance.md, "Algorithms by size"): bcube 2.4x faster
/// at 16 ranks and 3x at 32 for 1 MiB, 1.2x at 4 ranks for 1 MiB; the ring faster at 3 ranks and
/// once a step carries more than 256 KiB (4 ranks at 4 and 16 MiB, 8 ranks at 16 MiB, 4 at 64 MiB).
bool latency_bound_all_reduce(int ranks, std::size_t bytes) {
  constexpr std::size_t largest_ring_step = 256 * 1024;
  return ranks >= 4 && bytes / static_cast<std::size_t>(ranks) <= largest_ring_step;
}

/// Slot prefix of send/recv messages: above Gloo's collective prefixes (0x01-0x08).
constexpr std::uint8_t p2p_slot_prefix = 0x40;
/// Slot prefix of the direct all-gather (gloo_engine::all_gather).
constexpr std::uint8_t all_gather_slot_prefix = 0x41;
/// Slot prefix of the direct (small) broadcast.
constexpr std::uint8_t broadcast_slot_prefix = 0x42;
/// Slot prefix of the fingerprints (one per fingerprint_lane, from this one up).
constexpr std::uint8_t fingerprint_slot_prefix = 0x43;

/// The store key (under the communicator's prefix) of the nonce its pairs' keys derive from.
constexpr const char* pair_nonce_key = "pair-nonce";

/// Reaches tcp::Context::signalException, which Gloo keeps protected: the function its own
/// timeouts use to fail every pending operation and close every pair. Naming a protected member
/// through a derived class yields a pointer to the base's member, callable on any tcp::Context.
struct tcp_context_access : gloo::transport::tcp::Context {
  static void signal(gloo::transport::tcp::Context& context, const std::string& reason) {
    auto member = &tcp_context_access::signalException;
    (context.*member)(reason);
  }
};

/// A rendezvous context that can be aborted from another thread.
class abortable_context final : public gloo::rendezvous::Context {
public:
  using gloo::rendezvous::Context::Context;

  void abort(const std::string& reason) {
    if (auto* tcp = dynamic_cast<gloo::transport::tcp::Context*>(transportContext_.get()))
      tcp_context_access::signal(*tcp, reason);
  }
};

bool mentions_timeout(const char* what) {
  std::string text(what);
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text.find("timed out") != std::string::npos || text.find("timeout") != std::string::npos;
}

/// Runs `body`, turning Gloo's exceptions into am errors.
template <class F>
void translate_gloo_errors(F&& body) {
  try {
    body();
  } catch (const am::error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const gloo::IoException& e) {
    if (mentions_timeout(e.what()))
      throw timeout_error(std::string("Gloo timed out: ") + e.what());
    throw runtime_error(std::string("Gloo connection failed: ") + e.what());
  } catch (const gloo::EnforceNotMet& e) {
    throw runtime_error(std::string("Gloo refused the operation: ") + e.what());
  } catch (const std::exception& e) {
    throw runtime_error(std::string("Gloo failed: ") + e.what());
  }
}

/// Calls `f(type_tag<E>)` with an unsigned type E as wide as one element: Gloo's templates only use
/// the element size (the arithmetic is ours).
template <class F>
void with_element_size(std::size_t size, F&& f) {
  switch (size) {
    case 1: return f(static_cast<std::uint8_t*>(nullptr));
    case 2: return f(static_cast<std::uint16_t*>(nullptr));
    case 4: return f(static_cast<std::uint32_t*>(nullptr));
    case 8: return f(static_cast<std::uint64_t*>(nullptr));
  }
  throw value_error("unsupported element size " + std::to_string(size));
}

template <class E>
E* typed(const void* p) {
  return static_cast<E*>(const_cast<void*>(p));
}

/// The time left until `deadline`, at least 1 ms (Gloo refuses a zero timeout).
std::chrono::milliseconds left_until(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return std::max(left, std::chrono::milliseconds(1));
}

} // namespace

/// The receives of one fingerprint exchange (gloo_engine::post_fingerprints): the records arrive
/// in `records`, at each peer's rank.
struct posted_fingerprints {
  std::vector<std::byte> records;
  std::shared_ptr<gloo::transport::UnboundBuffer> buffer;
  std::uint64_t slot = 0;
};

struct gloo_engine::state {
  int rank = 0;
  int size = 1;
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<abortable_context> context;
  /// Exchanges that failed with receives still posted: kept, with the memory those receives
  /// write, until the engine (its connections) goes.
  std::vector<std::shared_ptr<posted_fingerprints>> failed_exchanges;
  /// Grow-only scratch of the worker thread (the blocks of the reduce-scatter step): reused so
  /// repeated collectives do not pay the first-touch cost of fresh pages.
  std::unique_ptr<std::byte[]> scratch;
  std::size_t scratch_bytes = 0;

  std::byte* scratch_of(std::size_t bytes) {
    if (bytes > scratch_bytes) {
      scratch.reset();
      scratch_bytes = 0;
      try {
        scratch.reset(new std::byte[bytes]);
      } catch (const std::bad_alloc&) {
        throw resource_exhausted(bytes, "the host");
      }
      scratch_bytes = bytes;
    }
    return scratch.get();
  }

  /// The reduce-scatter step: Gloo's all-to-all brings every rank's copy of this rank's block of
  /// `input` (split_block(count, size, rank)) here, and combining them in rank order writes the
  /// reduced block to `block_out`. Each rank sends (n-1)/n of its input, what a ring reduce-scatter
  /// sends; the order of the additions is numpy's (doc/architecture.md says why not Gloo's
  /// ReduceScatterHalvingDoubling).
  void reduce_own_block(const void* input, std::size_t count, dtype t, reduce_op op, std::uint32_t tag,
                        std::chrono::milliseconds timeout, void* block_out) {
    const std::size_t element = size_of(t);
    const std::size_t mine = split_block(count, size, rank).count;
    std::byte* blocks = scratch_of(std::max<std::size_t>(mine * element * size, 1));
    std::vector<std::int64_t> send_counts(size);
    for (int r = 0; r < size; ++r)
      send_counts[r] = static_cast<std::int64_t>(split_block(count, size, r).count);
    const std::vector<std::int64_t> recv_counts(size, static_cast<std::int64_t>(mine));
    translate_gloo_errors([&] {
      with_element_size(element, [&](auto* type) {
        using E = std::remove_pointer_t<decltype(type)>;
        gloo::AlltoallvOptions opts(context);
        opts.setInput(typed<E>(input), send_counts);
        opts.setOutput(reinterpret_cast<E*>(blocks), recv_counts);
        opts.setTag(tag);
        opts.setTimeout(timeout);
        gloo::alltoallv(opts);
      });
    });
    reduce_blocks(t, op, blocks, size, mine, block_out);
  }
};

void gloo_engine::check_bind_address(const std::string& address) {
  if (address.empty())
    throw value_error("The collectives' bind address is empty: give the address of a local interface, e.g. 127.0.0.1");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rv = ::getaddrinfo(address.c_str(), nullptr, &hints, &found); rv != 0)
    throw value_error("The collectives' bind address '" + address + "' does not resolve: " + ::gai_strerror(rv));
  int bind_errno = 0;
  bool bound = false;
  for (addrinfo* a = found; a != nullptr && !bound; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) {
      bind_errno = errno;
      continue;
    }
    bound = ::bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    if (!bound)
      bind_errno = errno;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (!bound && (bind_errno == EMFILE || bind_errno == ENFILE))
    throw runtime_error("The collectives cannot open a socket to bind '" + address + "': " + std::strerror(bind_errno)
                        + " (this process is at its file descriptor limit, `ulimit -n`; too many open "
                          "connections or files)");
  if (!bound)
    throw value_error("The collectives cannot bind to '" + address + "': " + std::strerror(bind_errno)
                      + "; give the address of a local interface");
}

gloo_engine::gloo_engine(cluster_services& cluster, const std::string& store_prefix, int rank, int size,
                         const std::string& bind_address, clock::time_point deadline)
    : state_(std::make_unique<state>()) {
  state_->rank = rank;
  state_->size = size;
  translate_gloo_errors([&] {
    gloo_store store(cluster, store_prefix, deadline);
    // The pairs' connections prove keys derived from the cluster's secret and a nonce drawn for
    // this creation (authenticated_pair.hpp): a stranger's connect or junk is dropped.
    pair_keys keys{cluster.secret(), store_prefix, {}};
    if (rank == 0) {
      keys.nonce = random_bytes(32);
      store.set(pair_nonce_key, std::vector<char>(keys.nonce.begin(), keys.nonce.end()));
    } else {
      const auto nonce = store.get(pair_nonce_key);
      keys.nonce.assign(nonce.begin(), nonce.end());
    }
    gloo::transport::tcp::attr attr;
    attr.hostname = bind_address;
    state_->device = make_authenticated_device(attr, std::move(keys));
    state_->context = std::make_shared<abortable_context>(rank, size);
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock::now());
    state_->context->setTimeout(std::max(left, milliseconds(1)));
    state_->context->connectFullMesh(store, state_->device);
    // connectFullMesh returns on a rank once its own side of every pair is up, while a peer may
    // still be finishing its side: a communicator destroyed at once cut that peer's creation short
    // ("Connection closed by peer", unit test "a name is single-use", 2 in 30 runs under load).
    // One barrier over the new mesh returns creation on every rank only once every pair is up on
    // both sides (a round trip per creation; creation already costs a store rendezvous).
    gloo::BarrierOptions barrier(state_->context);
    barrier.setTag(0);
    barrier.setTimeout(std::max(std::chrono::duration_cast<milliseconds>(deadline - clock::now()), milliseconds(1)));
    gloo::barrier(barrier);
  });
}

gloo_engine::~gloo_engine() = default;

void gloo_engine::abort(const std::string& reason) noexcept {
  try {
    state_->context->abort(reason);
  } catch (...) {
    // Aborting is best effort: the pairs are then closed or already failed.
  }
}

void gloo_engine::all_reduce(const void* input, void* output, std::size_t count, dtype t, reduce_op op,
                             std::uint32_t tag, milliseconds timeout) {
  if (count == 0)
    return;
  const auto& context = state_->context;
  const int divisor = op == reduce_op::mean ? state_->size : 1;
  if (accumulates_in_float(t, op)) {
    // float16/bfloat16 sums: a reduce-scatter whose blocks are summed in float32 in rank order and
    // rounded once, then an all-gather of the rounded blocks; the bytes travel as 16-bit values,
    // and every rank gets numpy's float32 sum then cast, bit for bit.
    const auto deadline = clock::now() + timeout;
    const std::size_t element = size_of(t);
    const auto mine = split_block(count, state_->size, state_->rank);
    auto* out = static_cast<std::byte*>(output);
    state_->reduce_own_block(input, count, t, op, tag, timeout, out + mine.offset * element);
    std::vector<std::size_t> counts(state_->size);
    for (int r = 0; r < state_->size; ++r)
      counts[r] = split_block(count, state_->size, r).count;
    translate_gloo_errors([&] {
      with_element_size(element, [&](auto* type) {
        using E = std::remove_pointer_t<decltype(type)>;
        gloo::AllgathervOptions opts(context);
        opts.setOutput(reinterpret_cast<E*>(out), counts);
        opts.setTag(tag);
        opts.setTimeout(left_until(deadline));
        gloo::allgatherv(opts);
      });
    });
    return;
  }
  const reduce_kernel kernel = kernel_for(t, op);
  translate_gloo_errors([&] {
    with_element_size(size_of(t), [&](auto* type) {
      using E = std::remove_pointer_t<decltype(type)>;
      gloo::AllreduceOptions opts(context);
      if (input != output)
        opts.setInput(typed<E>(input), count);
      opts.setOutput(typed<E>(output), count);
      opts.setReduceFunction(kernel);
      opts.setTag(tag);
      opts.setTimeout(timeout);
      opts.setAlgorithm(latency_bound_all_reduce(state_->size, count * size_of(t))
                          ? gloo::AllreduceOptions::Algorithm::BCUBE
                          : gloo::AllreduceOptions::Algorithm::RING);
      gloo::allreduce(opts);
    });
  });
  if (divisor != 1)
    divide_in_place(t, output, count, divisor);
}

std::shared_ptr<void> gloo_engine::post_all_gather(void* output, std::size_t count, dtype t, std::uint32_t tag) {
  if (count == 0 || state_->size == 1)
    return nullptr;
  const std::size_t bytes = count * size_of(t);
  std::shared_ptr<gloo::transport::UnboundBuffer> buffer;
  translate_gloo_errors([&] {
    buffer = state_->context->createUnboundBuffer(output, bytes * state_->size);
    const auto slot = gloo::Slot::build(all_gather_slot_prefix, tag);
    for (int peer = 0; peer < state_->size; ++peer)
      if (peer != state_->rank)
        buffer->recv(peer, slot, peer * bytes, bytes);
  });
  return buffer;
}

void gloo_engine::all_gather(const void* input, void* output, std::size_t count, dtype t, std::uint32_t tag,
                             milliseconds timeout, const std::shared_ptr<void>& posted) {
  if (count == 0)
    return;
  // Every rank receives from every other rank (receives posted first, by post_all_gather), then
  // sends its block to each: one step instead of Gloo's ring of size - 1, with the same bytes per
  // rank ((size - 1) blocks sent and received).
  const std::size_t bytes = count * size_of(t);
  auto* out = static_cast<std::byte*>(output);
  const auto deadline = clock::now() + timeout;
  if (input != out + state_->rank * bytes)
    std::memcpy(out + state_->rank * bytes, input, bytes);
  if (state_->size == 1)
    return;
  auto buffer = std::static_pointer_cast<gloo::transport::UnboundBuffer>(
    posted ? posted : post_all_gather(output, count, t, tag));
  translate_gloo_errors([&] {
    const auto slot = gloo::Slot::build(all_gather_slot_prefix, tag);
    for (int k = 1; k < state_->size; ++k) // the next rank first, so not every rank sends to rank 0 at once
      buffer->send((state_->rank + k) % state_->size, slot, state_->rank * bytes, bytes);
    for (int k = 1; k < state_->size; ++k)
      buffer->waitRecv(left_until(deadline));
    for (int k = 1; k < state_->size; ++k)
      buffer->waitSend(left_until(deadline));
  });
}

std::shared_ptr<void> gloo_engine::post_fingerprints(const std::vector<int>& peers, fingerprint_lane lane,
                                                     std::uint32_t tag) {
  if (peers.empty())
    return nullptr;
  auto posted = std::make_shared<posted_fingerprints>();
  posted->records.assign(fingerprint_bytes * static_cast<std::size_t>(state_->size), std::byte{0});
  posted->slot = gloo::Slot::build(static_cast<std::uint8_t>(fingerprint_slot_prefix + static_cast<std::uint8_t>(lane)),
                                   tag);
  translate_gloo_errors([&] {
    posted->buffer = state_->context->createUnboundBuffer(posted->records.data(), posted->records.size());
    for (int peer : peers)
      posted->buffer->recv(peer, posted->slot, static_cast<std::size_t>(peer) * fingerprint_bytes, fingerprint_bytes);
  });
  return posted;
}

gloo_engine::fingerprint_exchange gloo_engine::exchange_fingerprints(const fingerprint_record& mine,
                                                                     const std::vector<int>& peers,
                                                                     fingerprint_lane lane, std::uint32_t tag,
                                                                     milliseconds timeout,
                                                                     const std::shared_ptr<void>& posted) {
  const auto deadline = clock::now() + timeout;
  const std::size_t own_at = static_cast<std::size_t>(state_->rank) * fingerprint_bytes;
  fingerprint_exchange out;
  std::shared_ptr<posted_fingerprints> exchange;
  std::vector<int> waiting = peers;
  try {
    exchange = std::static_pointer_cast<posted_fingerprints>(posted ? posted : post_fingerprints(peers, lane, tag));
    if (!exchange) { // no peers
      out.records.assign(fingerprint_bytes * static_cast<std::size_t>(state_->size), std::byte{0});
      std::memcpy(out.records.data() + own_at, mine.data(), fingerprint_bytes);
      return out;
    }
    std::memcpy(exchange->records.data() + own_at, mine.data(), fingerprint_bytes);
    translate_gloo_errors([&] {
      for (int k = 1; k < state_->size; ++k) { // the next rank first, as all_gather does
        const int peer = (state_->rank + k) % state_->size;
        if (std::find(peers.begin(), peers.end(), peer) != peers.end())
          exchange->buffer->send(peer, exchange->slot, own_at, fingerprint_bytes);
      }
      for (std::size_t k = 0; k < peers.size(); ++k) {
        int from = -1;
        if (!exchange->buffer->waitRecv(&from, left_until(deadline)))
          throw runtime_error("Gloo's wait for a peer's fingerprint was aborted");
        waiting.erase(std::remove(waiting.begin(), waiting.end(), from), waiting.end());
      }
      for (std::size_t k = 0; k < peers.size(); ++k)
        exchange->buffer->waitSend(left_until(deadline));
    });
    out.records = std::move(exchange->records);
    return out;
  } catch (...) {
    out.error = std::current_exception();
  }
  out.missing = waiting;
  if (exchange) {
    out.records = exchange->records; // a copy: the posted receives may still write the original
    state_->failed_exchanges.push_back(std::move(exchange));
  }
  return out;
}

void gloo_engine::reduce_scatter(const void* input, void* output, std::size_t count, dtype t, reduce_op op,
                                 std::uint32_t tag, milliseconds timeout) {
  check_reducible(t, op);
  if (count == 0)
    return;
  state_->reduce_own_block(input, count, t, op, tag, timeout, output);
}

std::shared_ptr<void> gloo_engine::post_broadcast(void* buffer, std::size_t count, dtype t, int root,
                                                 std::uint32_t tag) {
  const std::size_t bytes = count * size_of(t);
  if (bytes == 0 || bytes > direct_broadcast_bytes || state_->size == 1 || state_->rank == root)
    return nullptr;
  std::shared_ptr<gloo::transport::UnboundBuffer> posted;
  translate_gloo_errors([&] {
    posted = state_->context->createUnboundBuffer(buffer, bytes);
    posted->recv(root, gloo::Slot::build(broadcast_slot_prefix, tag), 0, bytes);
  });
  return posted;
}

void gloo_engine::broadcast(void* buffer, std::size_t count, dtype t, int root, std::uint32_t tag,
                            milliseconds timeout, const std::shared_ptr<void>& posted) {
  if (count == 0)
    return;
  const std::size_t bytes = count * size_of(t);
  if (bytes <= direct_broadcast_bytes && state_->size > 1) {
    // Small: the root sends to every rank, whose receive was posted before the check.
    translate_gloo_errors([&] {
      const auto slot = gloo::Slot::build(broadcast_slot_prefix, tag);
      if (state_->rank == root) {
        auto out = state_->context->createUnboundBuffer(buffer, bytes);
        for (int k = 1; k < state_->size; ++k)
          out->send((root + k) % state_->size, slot, 0, bytes);
        for (int k = 1; k < state_->size; ++k)
          out->waitSend(timeout);
      } else {
        auto in = std::static_pointer_cast<gloo::transport::UnboundBuffer>(
          posted ? posted : post_broadcast(buffer, count, t, root, tag));
        in->waitRecv(timeout);
      }
    });
    return;
  }
  translate_gloo_errors([&] {
    with_element_size(size_of(t), [&](auto* type) {
      using E = std::remove_pointer_t<decltype(type)>;
      gloo::BroadcastOptions opts(state_->context);
      opts.setOutput(typed<E>(buffer), count);
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(timeout);
      gloo::broadcast(opts);
    });
  });
}

void gloo_engine::all_to_all(const void* input, void* output, std::size_t count, dtype t, std::uint32_t tag,
                             milliseconds timeout) {
  if (count == 0)
    return;
  translate_gloo_errors([&] {
    with_element_size(size_of(t), [&](auto* type) {
      using E = std::remove_pointer_t<decltype(type)>;
      gloo::AlltoallOptions opts(state_->context);
      opts.setInput(typed<E>(input), count);
      opts.setOutput(typed<E>(output), count);
      opts.setTag(tag);
      opts.setTimeout(timeout);
      gloo::alltoall(opts);
    });
  });
}

void gloo_engine::send(const void* data, std::size_t bytes, int peer, std::uint32_t tag, milliseconds timeout) {
  if (bytes == 0)
    return;
  translate_gloo_errors([&] {
    auto buffer = state_->context->createUnboundBuffer(const_cast<void*>(data), bytes);
    buffer->send(peer, gloo::Slot::build(p2p_slot_prefix, tag));
    buffer->waitSend(timeout);
  });
}

void gloo_engine::recv(void* data, std::size_t bytes, int peer, std::uint32_t tag, milliseconds timeout) {
  if (bytes == 0)
    return;
  translate_gloo_errors([&] {
    auto buffer = state_->context->createUnboundBuffer(data, bytes);
    buffer->recv(peer, gloo::Slot::build(p2p_slot_prefix, tag));
    buffer->waitRecv(timeout);
  });
}

} // namespace am::detail
