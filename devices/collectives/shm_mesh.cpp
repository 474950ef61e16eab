#include "devices/collectives/shm_mesh.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/collectives/gloo_store.hpp"
#include "devices/collectives/ucx_library.hpp"

#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace am::detail {

namespace {

/// Progress calls without progress before a wait sleeps on the event descriptor: long enough to
/// catch an answer already on its way (a round trip over shared memory is 1.5-2 us), short enough
/// not to take a core from the other processes when there are more processes than cores.
constexpr int spin_rounds = 64;

/// After the spin, how long a wait yields its core between progress calls before it sleeps: with
/// more processes than cores, a peer that is about to answer gets the core without a trip through
/// the kernel's sleep and wake-up.
constexpr std::chrono::microseconds yield_for{200};

/// The longest sleep between two looks at the abort flag (an abort also wakes the sleeper).
constexpr std::chrono::milliseconds longest_sleep{100};

/// How long settle() gives a send that its owner gave up on to end by itself (its last fragments
/// copied into the segments by this rank's progress calls).
constexpr std::chrono::milliseconds send_grace{100};

/// How long the mesh's end waits for UCX to close its endpoints and cancel its requests.
constexpr std::chrono::milliseconds close_wait{200};

/// What makes two processes able to share memory through UCX: the same kernel boot and the same
/// IPC, PID and user namespaces. Empty when it cannot be told.
std::string machine_identity() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!(boot >> id))
    return {};
  for (const char* ns : {"/proc/self/ns/ipc", "/proc/self/ns/pid", "/proc/self/ns/user"}) {
    char link[128];
    const ssize_t n = ::readlink(ns, link, sizeof link - 1);
    if (n <= 0)
      return {};
    id += "/" + std::string(link, static_cast<std::size_t>(n));
  }
  return id;
}

std::vector<char> text_bytes(const std::string& s) {
  return std::vector<char>(s.begin(), s.end());
}

void on_send_done(void* request, ucs_status_t status, void* user) {
  auto* t = static_cast<shm_mesh::transfer*>(user);
  const auto* lib = ucx_library::get();
  t->failed = status != UCS_OK;
  if (t->failed)
    t->error = lib->status_string(status);
  t->done = true;
  t->request = nullptr;
  lib->request_free(request);
}

void on_receive_done(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user) {
  auto* t = static_cast<shm_mesh::transfer*>(user);
  const auto* lib = ucx_library::get();
  t->failed = status != UCS_OK;
  if (t->failed)
    t->error = lib->status_string(status);
  else {
    t->length = info->length;
    t->tag = info->sender_tag;
  }
  t->done = true;
  t->request = nullptr;
  lib->request_free(request);
}

} // namespace

struct shm_mesh::state {
  const ucx_library* lib = ucx_library::get();
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  int event_fd = -1;
  std::vector<ucp_ep_h> endpoints; // by rank; null for this rank
  std::vector<pid_t> pids;         // by rank, as each published it (0 for this rank)
  std::vector<std::shared_ptr<transfer>> in_flight;
  /// Set when a transfer of its owner's memory could not be withdrawn (settle()): progressing UCX
  /// could still read or write that memory, so nothing progresses this worker again, and its end
  /// leaks it rather than progress it.
  bool never_progress = false;

  ~state() {
    if (worker && never_progress)
      return; // see never_progress: the worker and its context stay, unprogressed, till the process ends
    if (worker) {
      for (auto& t : in_flight)
        if (t->request)
          lib->request_cancel(worker, t->request);
      std::vector<void*> closing;
      ucp_request_param_t param{};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_EP_CLOSE_FLAG_FORCE;
      for (auto ep : endpoints)
        if (ep)
          if (void* r = lib->ep_close_nbx(ep, &param); r != nullptr && !UCS_PTR_IS_ERR(r))
            closing.push_back(r);
      const auto give_up = clock::now() + close_wait;
      auto pending = [&] {
        for (void* r : closing)
          if (lib->request_check_status(r) == UCS_INPROGRESS)
            return true;
        return std::any_of(in_flight.begin(), in_flight.end(), [](auto& t) { return t->request != nullptr; });
      };
      while (pending() && clock::now() < give_up)
        lib->worker_progress(worker);
      for (void* r : closing)
        if (lib->request_check_status(r) != UCS_INPROGRESS)
          lib->request_free(r);
      lib->worker_destroy(worker);
    }
    if (context)
      lib->cleanup(context);
  }
};

std::unique_ptr<shm_mesh> shm_mesh::connect(cluster_services& cluster, const std::string& store_prefix, int rank,
                                            int size, clock::time_point deadline) {
  if (size <= 1)
    return nullptr; // nobody to check with
  // What this rank can offer: "<machine identity>;<pid>;<UCX worker address>", or "none;<why not>".
  auto s = std::make_unique<state>();
  std::string offer;
  const std::string machine = machine_identity();
  const char* choice = std::getenv("AM_COLLECTIVE_CHECKS");
  if (choice != nullptr && std::string(choice) == "tcp")
    offer = "none;AM_COLLECTIVE_CHECKS=tcp";
  else if (s->lib == nullptr)
    offer = "none;" + ucx_library::unavailable_reason();
  else if (machine.empty())
    offer = "none;no machine identity";
  else if (size > 65536)
    offer = "none;more ranks than a tag holds";
  std::vector<char> address;
  if (offer.empty()) {
    ucp_config_t* config = nullptr;
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
    ucp_worker_params_t worker_params{};
    worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    ucp_address_t* own = nullptr;
    std::size_t own_length = 0;
    if (s->lib->config_read(nullptr, nullptr, &config) != UCS_OK)
      offer = "none;UCX could not read its configuration";
    else {
      s->lib->config_modify(config, "TLS", "sm"); // shared memory only: no socket, no listening port
      // No rendezvous: every message goes eagerly through the shared segments, copied by the
      // progress calls of its two ranks. UCX's rendezvous reads the sender's pages with
      // process_vm_readv and, without its peer error handling (which its shared-memory transports
      // lack), aborts the process when the sender died meanwhile; the large send/recv do that read
      // themselves (mesh_transfer.cpp). Eager is also the faster up to 256 KiB (bench/ucx_peer).
      if (s->lib->config_modify(config, "RNDV_THRESH", "inf") != UCS_OK)
        offer = "none;UCX refused to turn its rendezvous off";
      else if (s->lib->init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &s->context) != UCS_OK)
        offer = "none;UCX found no shared-memory transport";
      s->lib->config_release(config);
    }
    if (offer.empty() && s->lib->worker_create(s->context, &worker_params, &s->worker) != UCS_OK)
      offer = "none;UCX could not create a worker";
    if (offer.empty() && s->lib->worker_get_efd(s->worker, &s->event_fd) != UCS_OK)
      offer = "none;UCX gave no event descriptor";
    if (offer.empty() && s->lib->worker_get_address(s->worker, &own, &own_length) != UCS_OK)
      offer = "none;UCX gave no worker address";
    if (offer.empty()) {
      const auto* begin = reinterpret_cast<const char*>(own);
      address.assign(begin, begin + own_length);
      s->lib->worker_release_address(s->worker, own);
      offer = machine + ";" + std::to_string(::getpid()) + ";";
    }
  }
  gloo_store store(cluster, store_prefix, deadline);
  std::vector<char> published = text_bytes(offer);
  published.insert(published.end(), address.begin(), address.end());
  store.set("shm/" + std::to_string(rank), published);
  std::vector<std::vector<char>> addresses(static_cast<std::size_t>(size));
  s->pids.assign(static_cast<std::size_t>(size), 0);
  bool usable = offer.rfind("none;", 0) != 0;
  for (int r = 0; r < size; ++r) {
    if (r == rank)
      continue;
    const std::vector<char> theirs = store.get("shm/" + std::to_string(r));
    const std::string prefix = machine + ";";
    if (!usable || theirs.size() <= prefix.size() || !std::equal(prefix.begin(), prefix.end(), theirs.begin()))
      usable = false; // keep reading: every rank reads every offer, so none is left waiting on its key
    else {
      // "<pid>;" then the address.
      auto at = theirs.begin() + static_cast<std::ptrdiff_t>(prefix.size());
      long pid = 0;
      while (at != theirs.end() && *at >= '0' && *at <= '9' && pid < 1L << 40)
        pid = pid * 10 + (*at++ - '0');
      if (pid <= 0 || at == theirs.end() || *at != ';')
        usable = false;
      else {
        s->pids[static_cast<std::size_t>(r)] = static_cast<pid_t>(pid);
        addresses[static_cast<std::size_t>(r)].assign(at + 1, theirs.end());
      }
    }
  }
  if (!usable)
    return nullptr;
  // Every rank attaches to every other's segments, then says whether it could; none leaves (and
  // takes its segments with it) before all have, and all fall back to TCP alike if one could not.
  s->endpoints.assign(static_cast<std::size_t>(size), nullptr);
  std::string attached = "ok";
  for (int r = 0; r < size && attached == "ok"; ++r) {
    if (r == rank)
      continue;
    ucp_ep_params_t ep_params{};
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address = reinterpret_cast<const ucp_address_t*>(addresses[static_cast<std::size_t>(r)].data());
    const ucs_status_t status = s->lib->ep_create(s->worker, &ep_params, &s->endpoints[static_cast<std::size_t>(r)]);
    if (status != UCS_OK)
      attached = "rank " + std::to_string(r) + ": " + s->lib->status_string(status);
  }
  store.set("shm-attached/" + std::to_string(rank), text_bytes(attached));
  for (int r = 0; r < size; ++r)
    if (r != rank && store.get("shm-attached/" + std::to_string(r)) != text_bytes("ok"))
      attached = "not ok";
  if (attached != "ok")
    return nullptr;
  return std::unique_ptr<shm_mesh>(new shm_mesh(std::move(s), rank, size));
}

shm_mesh::shm_mesh(std::unique_ptr<state> s, int rank, int size) : state_(std::move(s)), rank_(rank), size_(size) {}

shm_mesh::~shm_mesh() = default;

std::shared_ptr<shm_mesh::transfer> shm_mesh::send(int peer, std::uint64_t tag, std::vector<std::byte> bytes) {
  auto t = std::make_shared<transfer>();
  t->bytes = std::move(bytes);
  const void* data = t->bytes.data();
  const std::size_t size = t->bytes.size();
  return start_send(std::move(t), peer, tag, data, size);
}

std::shared_ptr<shm_mesh::transfer> shm_mesh::send_from(int peer, std::uint64_t tag, const void* data,
                                                        std::size_t size) {
  return start_send(std::make_shared<transfer>(), peer, tag, data, size);
}

std::shared_ptr<shm_mesh::transfer> shm_mesh::start_send(std::shared_ptr<transfer> t, int peer, std::uint64_t tag,
                                                         const void* data, std::size_t size) {
  t->peer = peer;
  ucp_ep_h endpoint = state_->endpoints.at(static_cast<std::size_t>(peer));
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = on_send_done;
  param.user_data = t.get();
  void* r = state_->lib->tag_send_nbx(endpoint, data, size, tag, &param);
  if (r == nullptr)
    t->done = true;
  else if (UCS_PTR_IS_ERR(r)) {
    t->done = t->failed = true;
    t->error = state_->lib->status_string(UCS_PTR_STATUS(r));
  } else {
    t->request = r;
    state_->in_flight.push_back(t);
  }
  return t;
}

std::shared_ptr<shm_mesh::transfer> shm_mesh::receive(std::uint64_t tag, std::uint64_t mask, std::size_t capacity) {
  auto t = std::make_shared<transfer>();
  t->bytes.resize(capacity);
  void* data = t->bytes.data();
  return start_receive(std::move(t), tag, mask, data, capacity);
}

std::shared_ptr<shm_mesh::transfer> shm_mesh::receive_into(std::uint64_t tag, std::uint64_t mask, void* data,
                                                           std::size_t capacity) {
  return start_receive(std::make_shared<transfer>(), tag, mask, data, capacity);
}

std::shared_ptr<shm_mesh::transfer> shm_mesh::start_receive(std::shared_ptr<transfer> t, std::uint64_t tag,
                                                            std::uint64_t mask, void* data, std::size_t capacity) {
  ucp_request_param_t param{};
  // Always through the callback (UCX 1.13 leaves recv_info unfilled when a match completes at once).
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = on_receive_done;
  param.user_data = t.get();
  void* r = state_->lib->tag_recv_nbx(state_->worker, data, capacity, tag, mask, &param);
  if (UCS_PTR_IS_ERR(r)) {
    t->done = t->failed = true;
    t->error = state_->lib->status_string(UCS_PTR_STATUS(r));
  } else if (!t->done) { // a match already there completes inside the call, through the callback
    t->request = r;
    state_->in_flight.push_back(t);
  }
  return t;
}

void shm_mesh::cancel(const std::shared_ptr<transfer>& t) {
  if (t && t->request)
    state_->lib->request_cancel(state_->worker, t->request);
}

bool shm_mesh::settle(const std::shared_ptr<transfer>& t, clock::duration limit) noexcept {
  if (!t || t->done)
    return true;
  if (!state_->never_progress) {
    const bool receive = t->peer < 0;
    if (receive)
      cancel(t); // ends it at once unless its fragments are arriving
    // UCX cannot withdraw a send (a forced close of its endpoint needs the error handling that its
    // shared-memory transports lack): it ends only when the receiver has read it, so it gets a
    // moment for a read under way, not the whole limit.
    const auto give_up = clock::now() + (receive ? limit : std::min<clock::duration>(limit, send_grace));
    while (!t->done && clock::now() < give_up)
      state_->lib->worker_progress(state_->worker);
    if (t->done)
      return true;
  }
  state_->never_progress = true;
  abort("a transfer could not be withdrawn from UCX");
  return false;
}

bool shm_mesh::progress() {
  if (state_->never_progress)
    return false;
  const bool moved = state_->lib->worker_progress(state_->worker) != 0;
  auto& flying = state_->in_flight;
  flying.erase(std::remove_if(flying.begin(), flying.end(), [](auto& t) { return t->done; }), flying.end());
  return moved;
}

pid_t shm_mesh::pid_of(int rank) const { return state_->pids.at(static_cast<std::size_t>(rank)); }

shm_mesh::wake shm_mesh::wait(const std::function<bool()>& ready, clock::time_point until) {
  int idle = 0;
  const auto idle_since = clock::now();
  for (;;) {
    if (aborted_.load(std::memory_order_acquire))
      return wake::aborted;
    while (progress()) {
    }
    if (ready())
      return wake::ready;
    const auto now = clock::now();
    if (now >= until)
      return wake::timed_out;
    if (++idle < spin_rounds)
      continue;
    if (now - idle_since < yield_for) { // hand the core to a peer that may be about to answer
      ::sched_yield();
      continue;
    }
    idle = 0;
    const ucs_status_t armed = state_->lib->worker_arm(state_->worker);
    if (armed == UCS_ERR_BUSY)
      continue; // events arrived meanwhile: progress them
    const auto sleep = std::min(std::chrono::ceil<std::chrono::milliseconds>(until - now), longest_sleep);
    pollfd fd{armed == UCS_OK ? state_->event_fd : -1, POLLIN, 0};
    ::poll(&fd, 1, static_cast<int>(armed == UCS_OK ? sleep.count() : 1));
  }
}

void shm_mesh::abort(const std::string& reason) noexcept {
  {
    std::lock_guard<std::mutex> guard(reason_mutex_);
    if (aborted_.load(std::memory_order_relaxed))
      return;
    try {
      reason_ = reason;
    } catch (...) {
    }
    aborted_.store(true, std::memory_order_release);
  }
  state_->lib->worker_signal(state_->worker);
}

std::string shm_mesh::abort_reason() const {
  std::lock_guard<std::mutex> guard(reason_mutex_);
  return reason_;
}

} // namespace am::detail
