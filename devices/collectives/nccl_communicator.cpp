#include "devices/collectives/nccl_communicator.hpp"
#include "devices/collectives/communicator_waits.hpp"

#include "actormesh/build_config.hpp"
#include "actors/cluster_services.hpp"
#include "actors/detail/fnv1a.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/collectives/block_split.hpp"
#include "devices/collectives/device_step_checks.hpp"
#include "devices/collectives/reduce_kernels.hpp"

#if AM_HAVE_CUDA && AM_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace am {

#if AM_HAVE_CUDA && AM_HAVE_NCCL

bool nccl_available() noexcept { return true; }

namespace {

using clock = std::chrono::steady_clock;
using milliseconds = std::chrono::milliseconds;


ncclDataType_t nccl_type(dtype t) {
  switch (t) {
    case dtype::bool_:
    case dtype::uint8: return ncclUint8;
    case dtype::int32: return ncclInt32;
    case dtype::int64: return ncclInt64;
    case dtype::float16: return ncclFloat16;
    case dtype::bfloat16: return ncclBfloat16;
    case dtype::float32: return ncclFloat32;
    case dtype::float64: return ncclFloat64;
  }
  throw value_error("Unknown dtype code " + std::to_string(static_cast<int>(t)));
}

ncclRedOp_t nccl_op(reduce_op op) {
  switch (op) {
    case reduce_op::sum: return ncclSum;
    case reduce_op::mean: return ncclAvg;
    case reduce_op::max: return ncclMax;
    case reduce_op::min: return ncclMin;
  }
  return ncclSum;
}

} // namespace

struct nccl_communicator::impl {
  detail::cluster_services& cluster;
  std::vector<device> devices;
  std::string name;
  milliseconds timeout;
  std::vector<int> local;        ///< this process's ranks
  std::vector<ncclComm_t> comms; ///< by local rank position
  std::vector<int> processes;    ///< the participating processes, sorted
  std::unique_ptr<detail::device_step_checks> checks; ///< the participants' checks of every step
  std::mutex mutex;              ///< one operation at a time; guards what follows
  std::uint64_t steps = 0;
  std::map<std::pair<int, int>, std::uint64_t> p2p_steps;
  std::atomic<bool> broken{false};
  std::string broken_reason;

  impl(detail::cluster_services& c, std::vector<device> d, std::string n, milliseconds t)
      : cluster(c), devices(std::move(d)), name(std::move(n)), timeout(t) {}

  std::string where(const std::string& signature, std::uint64_t step) const {
    return signature + " (step " + std::to_string(step) + " of NCCL communicator '" + name + "', process "
           + std::to_string(cluster.process_index()) + ")";
  }

  /// Aborts every local NCCL communicator and marks this one broken (the first reason stays).
  void break_with(const std::string& reason) {
    if (broken.exchange(true))
      return;
    broken_reason = reason;
    for (auto& c : comms)
      if (c) {
        ncclCommAbort(c);
        c = nullptr;
      }
  }

  void throw_if_broken() const {
    if (broken.load())
      throw runtime_error("NCCL communicator '" + name + "' is broken and refuses further operations ("
                          + broken_reason + "); create a new communicator, with a new name, to go on");
  }

  /// Waits until every local communicator has left ncclInProgress (creation, a group's end);
  /// throws on an NCCL error or at the deadline.
  void await_ready(clock::time_point deadline, const std::string& what) {
    for (;;) {
      bool pending = false;
      for (auto c : comms) {
        ncclResult_t state = ncclSuccess;
        ncclCommGetAsyncError(c, &state);
        if (state == ncclInProgress)
          pending = true;
        else if (state != ncclSuccess)
          throw runtime_error(what + ": NCCL error " + ncclGetErrorString(state) + " (" + ncclGetLastError(c) + ")");
      }
      if (!pending)
        return;
      if (clock::now() > deadline)
        throw timeout_error(what + ": NCCL did not finish within the timeout");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  /// Waits for the streams of an operation, polling NCCL's asynchronous errors and the
  /// participants' liveness; at an error or the deadline the communicator aborts.
  void await_streams(const std::vector<cudaStream_t>& streams, clock::time_point deadline, const std::string& what,
                     const std::vector<int>& participants) {
    auto next_liveness = clock::now() + detail::participant_liveness_poll;
    for (;;) {
      bool done = true;
      for (auto s : streams) {
        auto status = cudaStreamQuery(s);
        if (status == cudaErrorNotReady) {
          done = false;
        } else if (status != cudaSuccess) {
          cudaGetLastError();
          throw runtime_error(what + ": CUDA error " + cudaGetErrorString(status));
        }
      }
      if (done)
        return;
      for (auto c : comms) {
        ncclResult_t state = ncclSuccess;
        ncclCommGetAsyncError(c, &state);
        if (state != ncclSuccess && state != ncclInProgress)
          throw runtime_error(what + ": NCCL error " + ncclGetErrorString(state) + " (" + ncclGetLastError(c) + ")");
      }
      auto now = clock::now();
      if (now > deadline)
        throw timeout_error(what + " timed out after " + std::to_string(timeout.count())
                            + " ms: a participant never issued it, or the transport is stuck");
      if (now > next_liveness) {
        cluster.check_alive(participants); // throws am::process_failure_error
        next_liveness = now + detail::participant_liveness_poll;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  void check(ncclResult_t r, const std::string& what) {
    if (r != ncclSuccess && r != ncclInProgress)
      throw runtime_error(what + ": " + ncclGetErrorString(r));
  }

  void check_cuda(cudaError_t r, const std::string& what) {
    if (r != cudaSuccess) {
      cudaGetLastError();
      throw runtime_error(what + ": CUDA error " + cudaGetErrorString(r));
    }
  }

  milliseconds timeout_of(const timeout_type& t) const {
    if (t && t->count() <= 0)
      throw value_error("A collective's timeout must be positive, got " + std::to_string(t->count()) + " ms");
    return t ? *t : timeout;
  }

  void check_local(const std::vector<nccl_buffers>& buffers, bool needs_input) const {
    if (buffers.size() != local.size())
      throw value_error("NCCL communicator '" + name + "': " + std::to_string(buffers.size())
                        + " buffer sets for " + std::to_string(local.size()) + " local ranks");
    for (auto& b : buffers)
      if ((needs_input && !b.input) || !b.output)
        throw value_error("NCCL communicator '" + name + "': a null device buffer");
  }

  /// Has the participants check the operation (`check_step`, given the time left), enqueues it
  /// (`enqueue`, inside one NCCL group) and waits (`participants` are polled for liveness).
  /// Failures break the communicator.
  void run(const std::string& signature, std::uint64_t step, const std::vector<int>& participants,
           const std::vector<cudaStream_t>& streams, const timeout_type& t,
           const std::function<void(milliseconds)>& check_step, const std::function<void()>& enqueue) {
    auto deadline = clock::now() + timeout_of(t);
    auto what = where(signature, step);
    try {
      check_step(detail::time_left(deadline));
      check(ncclGroupStart(), what);
      enqueue();
      check(ncclGroupEnd(), what);
      await_ready(deadline, what);
      await_streams(streams, deadline, what, participants);
    } catch (const std::exception& e) {
      break_with(e.what());
      throw;
    }
  }

  std::vector<cudaStream_t> streams_of(const std::vector<nccl_buffers>& buffers) const {
    std::vector<cudaStream_t> out;
    for (auto& b : buffers)
      out.push_back(static_cast<cudaStream_t>(b.stream));
    return out;
  }

  /// One end (`local_rank`, this process's) of a send/recv between ranks `from` and `to`: a step of
  /// the pair's own sequence, which both ends number alike.
  void point_to_point(int from, int to, int local_rank, const char* what, const nccl_buffers& buffers,
                      std::size_t count, dtype type, const timeout_type& t,
                      const std::function<ncclResult_t(ncclComm_t, cudaStream_t)>& call) {
    auto it = std::find(local.begin(), local.end(), local_rank);
    if (it == local.end())
      throw value_error(std::string(what) + ": rank " + std::to_string(local_rank) + " is not one of this process's ranks");
    int peer = local_rank == from ? to : from;
    if (peer < 0 || peer >= static_cast<int>(devices.size()) || from == to)
      throw value_error(std::string(what) + ": peer rank " + std::to_string(peer)
                        + " is not another rank of NCCL communicator '" + name + "'");
    auto at = static_cast<std::size_t>(it - local.begin());
    std::lock_guard<std::mutex> guard(mutex);
    throw_if_broken();
    std::vector<int> pair{devices[static_cast<std::size_t>(from)].process_index,
                          devices[static_cast<std::size_t>(to)].process_index};
    std::sort(pair.begin(), pair.end());
    pair.erase(std::unique(pair.begin(), pair.end()), pair.end());
    auto stream = static_cast<cudaStream_t>(buffers.stream);
    const std::string signature = "nccl send/recv " + std::string(am::name(type)) + "[" + std::to_string(count)
                                  + "] from rank " + std::to_string(from) + " to rank " + std::to_string(to);
    run(signature, p2p_steps[{from, to}]++, pair, {stream}, t,
        [&](milliseconds left) {
          checks->pair(from, to, devices[static_cast<std::size_t>(from)].process_index,
                       devices[static_cast<std::size_t>(to)].process_index, signature, left);
        },
        [&] { check(call(comms[at], stream), what); });
  }

  /// A collective over every rank: one step of the communicator's own sequence.
  void collective(const std::string& signature, const std::vector<nccl_buffers>& buffers, const timeout_type& t,
                  const std::function<void(std::size_t, int, ncclComm_t, cudaStream_t)>& per_rank) {
    std::lock_guard<std::mutex> guard(mutex);
    throw_if_broken();
    auto streams = streams_of(buffers);
    const std::uint64_t step = ++steps;
    run(signature, step, processes, streams, t, [&](milliseconds left) { checks->collective(step, signature, left); }, [&] {
      for (std::size_t i = 0; i < local.size(); ++i)
        per_rank(i, local[i], comms[i], streams[i]);
    });
  }
};

nccl_communicator::nccl_communicator(detail::cluster_services& cluster, std::vector<device> devices,
                                     std::string name, std::chrono::milliseconds timeout,
                                     const std::string& bind_address)
    : impl_(std::make_unique<impl>(cluster, std::move(devices), std::move(name), timeout)) {
  auto& m = *impl_;
  if (m.devices.empty())
    throw value_error("An NCCL communicator needs at least one device");
  std::set<int> ids;
  int me = cluster.process_index();
  for (std::size_t r = 0; r < m.devices.size(); ++r) {
    auto& d = m.devices[r];
    if (d.platform != platform::cuda)
      throw value_error("NCCL communicator '" + m.name + "': " + to_string(d) + " is not a CUDA device");
    if (!ids.insert(d.id).second)
      throw value_error("NCCL communicator '" + m.name + "': " + to_string(d) + " is listed twice");
    if (d.process_index == me)
      m.local.push_back(static_cast<int>(r));
    m.processes.push_back(d.process_index);
  }
  std::sort(m.processes.begin(), m.processes.end());
  m.processes.erase(std::unique(m.processes.begin(), m.processes.end()), m.processes.end());
  if (m.local.empty())
    throw value_error("NCCL communicator '" + m.name + "': none of its devices belongs to this process ("
                      + std::to_string(me) + ")");
  auto deadline = clock::now() + timeout;
  // The unique id: made by the process of rank 0, handed to the others through the store.
  const std::string key = "am.nccl." + m.name + ".id";
  ncclUniqueId id;
  if (m.devices.front().process_index == me) {
    m.check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    cluster.kv_set(key, std::string(reinterpret_cast<const char*>(&id), sizeof id));
  } else {
    auto bytes = cluster.kv_get(key, detail::time_left(deadline));
    if (bytes.size() != sizeof id)
      throw value_error("NCCL communicator '" + m.name + "': the unique id in the store has " + std::to_string(bytes.size())
                        + " bytes, not " + std::to_string(sizeof id));
    std::memcpy(&id, bytes.data(), sizeof id);
  }
  // Creation is step 0: every participant must agree on the list (the checks' own host
  // communicator is created through the supervisor; every later step is checked by the
  // participants over it).
  std::vector<int> ids_in_order;
  for (auto& d : m.devices)
    ids_in_order.push_back(d.id);
  m.checks = std::make_unique<detail::device_step_checks>(
    cluster, m.processes, m.name, "nccl create over devices " + detail::bracketed_list_text(ids_in_order), bind_address,
    detail::time_left(deadline));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0; // every call returns at once; waits poll, so that a timeout can abort
  m.comms.assign(m.local.size(), nullptr);
  try {
    m.check(ncclGroupStart(), "ncclGroupStart");
    for (std::size_t i = 0; i < m.local.size(); ++i) {
      cudaSetDevice(m.devices[static_cast<std::size_t>(m.local[i])].local_ordinal);
      m.check(ncclCommInitRankConfig(&m.comms[i], static_cast<int>(m.devices.size()), id, m.local[i], &config),
              "ncclCommInitRankConfig");
    }
    m.check(ncclGroupEnd(), "ncclGroupEnd");
    m.await_ready(deadline, "creating NCCL communicator '" + m.name + "'");
  } catch (const std::exception& e) {
    m.break_with(e.what());
    throw;
  }
}

nccl_communicator::~nccl_communicator() {
  auto& m = *impl_;
  if (m.broken.load())
    return; // aborted already
  auto deadline = clock::now() + m.timeout;
  try {
    for (auto c : m.comms)
      ncclCommFinalize(c);
    m.await_ready(deadline, "finalizing NCCL communicator '" + m.name + "'");
    for (auto& c : m.comms) {
      ncclCommDestroy(c);
      c = nullptr;
    }
  } catch (const std::exception& e) {
    m.break_with(e.what());
  }
}

int nccl_communicator::size() const noexcept { return static_cast<int>(impl_->devices.size()); }

const std::vector<int>& nccl_communicator::local_ranks() const noexcept { return impl_->local; }

bool nccl_communicator::broken() const noexcept { return impl_->broken.load(); }

namespace {

std::string shape_text(dtype t, std::size_t count) {
  return std::string(name(t)) + "[" + std::to_string(count) + "]";
}

} // namespace

void nccl_communicator::all_reduce(const std::vector<nccl_buffers>& local, std::size_t count, dtype type,
                                   reduce_op op, timeout_type timeout) {
  detail::check_reducible(type, op);
  impl_->check_local(local, true);
  impl_->collective("nccl all_reduce(" + std::string(name(op)) + ") " + shape_text(type, count), local, timeout,
                    [&](std::size_t i, int, ncclComm_t comm, cudaStream_t stream) {
                      impl_->check(ncclAllReduce(local[i].input, local[i].output, count, nccl_type(type), nccl_op(op),
                                                 comm, stream),
                                   "ncclAllReduce");
                    });
}

void nccl_communicator::all_gather(const std::vector<nccl_buffers>& local, std::size_t count, dtype type,
                                   timeout_type timeout) {
  impl_->check_local(local, true);
  impl_->collective("nccl all_gather " + shape_text(type, count), local, timeout,
                    [&](std::size_t i, int, ncclComm_t comm, cudaStream_t stream) {
                      impl_->check(ncclAllGather(local[i].input, local[i].output, count, nccl_type(type), comm, stream),
                                   "ncclAllGather");
                    });
}

void nccl_communicator::reduce_scatter(const std::vector<nccl_buffers>& local, std::size_t count, dtype type,
                                       reduce_op op, timeout_type timeout) {
  detail::check_reducible(type, op);
  impl_->check_local(local, true);
  int n = size();
  bool even = count % static_cast<std::size_t>(n) == 0;
  impl_->collective(
    "nccl reduce_scatter(" + std::string(name(op)) + ") " + shape_text(type, count), local, timeout,
    [&](std::size_t i, int rank, ncclComm_t comm, cudaStream_t stream) {
      if (even) {
        impl_->check(ncclReduceScatter(local[i].input, local[i].output, count / static_cast<std::size_t>(n),
                                       nccl_type(type), nccl_op(op), comm, stream),
                     "ncclReduceScatter");
        return;
      }
      // Uneven blocks (numpy.array_split): one reduce per block, rooted at the block's rank.
      for (int r = 0; r < n; ++r) {
        auto block = split_block(count, n, r);
        auto* in = static_cast<const std::byte*>(local[i].input) + block.offset * size_of(type);
        impl_->check(ncclReduce(in, r == rank ? local[i].output : nullptr, block.count, nccl_type(type),
                                nccl_op(op), r, comm, stream),
                     "ncclReduce");
      }
    });
}

void nccl_communicator::broadcast(const std::vector<nccl_buffers>& local, std::size_t count, dtype type, int root,
                                  timeout_type timeout) {
  if (root < 0 || root >= size())
    throw value_error("broadcast: root rank " + std::to_string(root) + " is not a rank of NCCL communicator '"
                      + impl_->name + "' (0 to " + std::to_string(size() - 1) + ")");
  impl_->check_local(local, false);
  impl_->collective("nccl broadcast(root " + std::to_string(root) + ") " + shape_text(type, count), local, timeout,
                    [&](std::size_t i, int rank, ncclComm_t comm, cudaStream_t stream) {
                      const void* in = rank == root ? local[i].input : local[i].output;
                      impl_->check(ncclBroadcast(in ? in : local[i].output, local[i].output, count, nccl_type(type),
                                                 root, comm, stream),
                                   "ncclBroadcast");
                    });
}

void nccl_communicator::all_to_all(const std::vector<nccl_buffers>& local, std::size_t count, dtype type,
                                   timeout_type timeout) {
  int n = size();
  if (count % static_cast<std::size_t>(n) != 0)
    throw value_error("all_to_all: " + std::to_string(count) + " elements do not split into " + std::to_string(n)
                      + " equal blocks");
  impl_->check_local(local, true);
  std::size_t block = count / static_cast<std::size_t>(n);
  std::size_t bytes = block * size_of(type);
  impl_->collective("nccl all_to_all " + shape_text(type, count), local, timeout,
                    [&](std::size_t i, int, ncclComm_t comm, cudaStream_t stream) {
                      for (int peer = 0; peer < n; ++peer) {
                        auto* in = static_cast<const std::byte*>(local[i].input) + static_cast<std::size_t>(peer) * bytes;
                        auto* out = static_cast<std::byte*>(local[i].output) + static_cast<std::size_t>(peer) * bytes;
                        impl_->check(ncclSend(in, block, nccl_type(type), peer, comm, stream), "ncclSend");
                        impl_->check(ncclRecv(out, block, nccl_type(type), peer, comm, stream), "ncclRecv");
                      }
                    });
}

void nccl_communicator::permute(const std::vector<nccl_buffers>& local, std::size_t count, dtype type,
                                const std::vector<std::pair<int, int>>& pairs, timeout_type timeout) {
  int n = size();
  std::vector<int> source(static_cast<std::size_t>(n), -1), destination(static_cast<std::size_t>(n), -1);
  std::string text;
  for (auto [from, to] : pairs) {
    if (from < 0 || from >= n || to < 0 || to >= n)
      throw value_error("permute: the pair (" + std::to_string(from) + ", " + std::to_string(to)
                        + ") names a rank outside NCCL communicator '" + impl_->name + "' (0 to "
                        + std::to_string(n - 1) + ")");
    auto& src = source[static_cast<std::size_t>(to)];
    auto& dst = destination[static_cast<std::size_t>(from)];
    if (src >= 0 || dst >= 0)
      throw value_error("permute: rank " + std::to_string(src >= 0 ? to : from) + " appears twice as a "
                        + (src >= 0 ? "destination" : "source"));
    src = from;
    dst = to;
    text += (text.empty() ? "" : ", ") + std::to_string(from) + "->" + std::to_string(to);
  }
  impl_->check_local(local, true);
  if (text.size() > 160) { // the participants compare the text: a digest of the pairs keeps it short
    detail::fnv1a64 digest;
    digest.add_text(text);
    text = std::to_string(pairs.size()) + " pairs, digest " + digest.hex();
  }
  auto bytes = count * size_of(type);
  impl_->collective("nccl permute [" + text + "] " + shape_text(type, count), local, timeout,
                    [&](std::size_t i, int rank, ncclComm_t comm, cudaStream_t stream) {
                      auto r = static_cast<std::size_t>(rank);
                      auto& b = local[i];
                      cudaSetDevice(impl_->devices[r].local_ordinal);
                      if (source[r] < 0 && bytes > 0)
                        impl_->check_cuda(cudaMemsetAsync(b.output, 0, bytes, stream), "cudaMemsetAsync");
                      if (source[r] == rank && bytes > 0)
                        impl_->check_cuda(cudaMemcpyAsync(b.output, b.input, bytes, cudaMemcpyDeviceToDevice, stream),
                                          "cudaMemcpyAsync");
                      if (destination[r] >= 0 && destination[r] != rank)
                        impl_->check(ncclSend(b.input, count, nccl_type(type), destination[r], comm, stream), "ncclSend");
                      if (source[r] >= 0 && source[r] != rank)
                        impl_->check(ncclRecv(b.output, count, nccl_type(type), source[r], comm, stream), "ncclRecv");
                    });
}

void nccl_communicator::send(int from, const nccl_buffers& buffers, std::size_t count, dtype type, int to,
                             timeout_type timeout) {
  if (!buffers.input)
    throw value_error("send: a null device buffer");
  impl_->point_to_point(from, to, from, "send", buffers, count, type, timeout, [&](ncclComm_t comm, cudaStream_t s) {
    return ncclSend(buffers.input, count, nccl_type(type), to, comm, s);
  });
}

void nccl_communicator::recv(int to, const nccl_buffers& buffers, std::size_t count, dtype type, int from,
                             timeout_type timeout) {
  if (!buffers.output)
    throw value_error("recv: a null device buffer");
  impl_->point_to_point(from, to, to, "recv", buffers, count, type, timeout, [&](ncclComm_t comm, cudaStream_t s) {
    return ncclRecv(buffers.output, count, nccl_type(type), from, comm, s);
  });
}

#else // no NCCL in this build

bool nccl_available() noexcept { return false; }

struct nccl_communicator::impl {};

nccl_communicator::nccl_communicator(detail::cluster_services&, std::vector<device>, std::string, std::chrono::milliseconds,
                                     const std::string&) {
  throw runtime_error("This actormesh build has no NCCL (built without CUDA, or NCCL was not found at build time)");
}

nccl_communicator::~nccl_communicator() = default;
int nccl_communicator::size() const noexcept { return 0; }
const std::vector<int>& nccl_communicator::local_ranks() const noexcept {
  static const std::vector<int> none;
  return none;
}
bool nccl_communicator::broken() const noexcept { return true; }
void nccl_communicator::all_reduce(const std::vector<nccl_buffers>&, std::size_t, dtype, reduce_op, timeout_type) {}
void nccl_communicator::all_gather(const std::vector<nccl_buffers>&, std::size_t, dtype, timeout_type) {}
void nccl_communicator::reduce_scatter(const std::vector<nccl_buffers>&, std::size_t, dtype, reduce_op, timeout_type) {}
void nccl_communicator::broadcast(const std::vector<nccl_buffers>&, std::size_t, dtype, int, timeout_type) {}
void nccl_communicator::all_to_all(const std::vector<nccl_buffers>&, std::size_t, dtype, timeout_type) {}
void nccl_communicator::permute(const std::vector<nccl_buffers>&, std::size_t, dtype,
                                const std::vector<std::pair<int, int>>&, timeout_type) {}
void nccl_communicator::send(int, const nccl_buffers&, std::size_t, dtype, int, timeout_type) {}
void nccl_communicator::recv(int, const nccl_buffers&, std::size_t, dtype, int, timeout_type) {}

#endif

} // namespace am
