#include "devices/detail/runtime_impl.hpp"
#include "devices/detail/urgent_exit.hpp"

#include "actormesh/build_config.hpp"
#include "actors/detail/log.hpp"
#include "actormesh/actors/errors.hpp"
#include "devices/detail/host_actor.hpp"
#include "actormesh/actors/lane.hpp"
#include "devices/cpu/cpu_device.hpp"
#include "devices/detail/actor_system_of.hpp"
#include "devices/detail/peer_endpoint.hpp"
#include "devices/remote/call_server.hpp"
#include "devices/remote/controller_link.hpp"
#include "devices/remote/remote_messages.hpp"
#include "devices/remote/worker_endpoint.hpp"
#include "actormesh/observability/runtime_stats.hpp"
#include "observability/stats_wire.hpp"
#include "observability/trace_session.hpp"

#if AM_HAVE_CUDA
#include "devices/cuda/cuda_device.hpp"
#include "devices/cuda/cuda_memory.hpp"
#endif

#include <caf/atom.hpp>
#include <caf/logger.hpp>
#include <caf/system_messages.hpp>
#include <caf/exit_reason.hpp>
#include <caf/make_message.hpp>
#include <caf/message_id.hpp>
#include <caf/message_priority.hpp>
#include <caf/send.hpp>

#include <mutex>
#include <thread>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

namespace am::detail {

namespace {

std::mutex current_mutex;
std::shared_ptr<runtime_impl> current;
/// Bumped (under current_mutex) whenever `current` changes, so that a thread can keep its own copy
/// of `current` and take the lock only when the runtime changed: every call looks the runtime up,
/// and a process-wide mutex per call was a cost on the lane path and a point of contention
/// between calling threads.
std::atomic<std::uint64_t> current_generation{1};

/// One thread's copy of `current`, valid while its generation is the current one.
struct runtime_cache {
  std::uint64_t generation = 0;
  std::shared_ptr<runtime_impl> impl;
};

void configure_caf(caf::actor_system_config& cfg, const resolved_options& opts, const join_settings& join) {
  cfg.set("scheduler.policy", opts.scheduler == scheduler_policy::stealing ? caf::atom("stealing")
                                                                             : caf::atom("sharing"));
  if (opts.scheduler_threads > 0)
    cfg.set("scheduler.max-threads", static_cast<size_t>(opts.scheduler_threads));
  cfg.set("logger.verbosity", caf::atom("quiet"));
  configure_cluster_modules(cfg, join, opts.tls_certificate, opts.tls_key, opts.tls_ca);
}

/// "host:port" split; the options were checked already, so a bad address is a bug here.
std::pair<std::string, std::uint16_t> split_address(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos)
    throw value_error("coordinator address '" + address + "' is not host:port");
  auto host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  int port = std::stoi(address.substr(colon + 1));
  if (port < 1 || port > 65535)
    throw value_error("coordinator address '" + address + "' has no valid port");
  return {host, static_cast<std::uint16_t>(port)};
}

/// The local devices this process brings to the cluster: CPU devices first, then GPUs.
std::vector<device> local_device_list(const resolved_options& opts, const gpu_report& gpus) {
  std::vector<device> out;
  for (int k = 0; k < opts.cpu_devices; ++k)
    out.push_back({0, opts.process_id, platform::cpu, k});
#if AM_HAVE_CUDA
  for (int k = 0; k < gpus.count; ++k)
    out.push_back({0, opts.process_id, platform::cuda, k});
#else
  (void)gpus;
#endif
  return out;
}

/// The local address of the interface that routes to `host` (a UDP socket "connected" there sends
/// nothing; the kernel only picks the route). Falls back to `host` itself.
std::string local_address_towards(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found)
    return host;
  std::string out = host;
  int fd = ::socket(found->ai_family, SOCK_DGRAM, 0);
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    char text[INET6_ADDRSTRLEN] = {};
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0
        && ::getnameinfo(reinterpret_cast<sockaddr*>(&local), len, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0)
      out = text;
  }
  if (fd >= 0)
    ::close(fd);
  freeaddrinfo(found);
  return out;
}

join_settings make_join_settings(const resolved_options& opts, const gpu_report& gpus) {
  join_settings s;
  s.networked = opts.clustered();
  s.process = opts.process_id;
  s.process_count = opts.num_processes;
  if (s.networked) {
    auto [host, port] = split_address(opts.coordinator_address);
    s.coordinator_host = host;
    s.coordinator_port = port;
    s.listen_address = opts.listen_address.empty() ? host : opts.listen_address;
  }
  s.tls = !opts.tls_certificate.empty();
  s.cluster_token = opts.cluster_token;
  s.max_frame_bytes = opts.max_frame_bytes;
  s.max_connections = opts.max_connections;
  s.join_timeout = opts.join_timeout;
  s.heartbeat_interval = opts.heartbeat_interval;
  s.heartbeat_timeout = opts.heartbeat_timeout;
  s.collective_timeout = opts.collective_timeout;
  s.local_devices = local_device_list(opts, gpus);
  if (s.networked && opts.role == process_role::controller)
    s.role = member_role::controller;
  if (s.networked && opts.role == process_role::worker)
    s.role = member_role::worker;
  s.answer_stats = [process = opts.process_id] {
    return stats::answer_stats_request(process, [] { return runtime_stats(); });
  };
  return s;
}

} // namespace

runtime_impl::runtime_impl(resolved_options opts) : options_(std::move(opts)) {
  log_level level = log_level::warning;
  parse_log_level(options_.log_level, level);
  set_log_level(level);
  observability::runtime_trace_open(options_.trace, options_.process_id, options_.num_processes);
  gpus_ = discover_gpus(options_.use_gpus);
  auto join = make_join_settings(options_, gpus_);
  configure_caf(caf_config_, options_, join);
  system_ = std::make_unique<caf::actor_system>(caf_config_);
  try {
    start_actors(join);
  } catch (...) {
    // ~actor_system waits for every actor spawned so far (a worker's call server, the devices,
    // the membership client): without an exit each, a failed join or connection would hang here
    // instead of reaching the caller.
    stop_->raise();
    exit_spawned_actors();
    exits_.wait(); // before ~actor_system (exit_watch.hpp)
    throw;
  }
  // CAF 0.17 leaves a thread-local reference to the system's logger on a thread that constructs the
  // system or spawns an actor, and ~actor_system waits until the logger is destroyed: stopping on
  // any other thread while this one lives would wait forever. Drop the reference, so that any
  // thread can stop the runtime.
  caf::logger::set_current_actor_system(nullptr);
  log(log_level::info, "runtime started: {} CPU devices, {} GPUs{}{}", options_.cpu_devices,
      gpus_.count, gpus_.reason.empty() ? "" : " (", gpus_.reason.empty() ? "" : gpus_.reason + ")");
}

void runtime_impl::start_actors(join_settings& join) {
  // A worker's call server goes with its join (the controller learns it with the directory); it
  // holds the controller's requests until the devices below are up.
  if (join.role == member_role::worker) {
    call_server_ = remote::spawn_call_server(*system_, *this, controller_stopped_);
    exits_.watch(call_server_); // before the join hands it to the controller
    join.call_server = call_server_;
  }
  // Join first: the directory gives every device its global id (by process, then local order).
  membership_ = join_cluster(*system_, join);
  observability::runtime_trace_joined(*membership_.client);
  if (join.networked) {
    // A listen address given for this process is its data-plane address too, unless it is a
    // wildcard: peers must be told an address they can reach, not "any".
    bool wildcard = options_.listen_address == "0.0.0.0" || options_.listen_address == "::";
    bool given = options_.listen_address != join.coordinator_host && !wildcard;
    data_plane_address_ = given ? options_.listen_address
                                : local_address_towards(join.coordinator_host, join.coordinator_port);
  }
  // Every device gets the endpoint of how this process reaches it (device_endpoint.hpp).
  auto add_own = [this](const device& dev, caf::actor actor) {
    exits_.watch(actor);
    auto own = std::make_unique<actor_endpoint>(dev, std::move(actor), new_receiver_key());
    own_endpoints_.push_back(own.get());
    endpoints_.push_back(std::move(own));
  };
  for (auto& dev : membership_.client->directory().devices) {
    if (dev.process_index != options_.process_id) {
      endpoints_.push_back(std::make_unique<peer_endpoint>(dev, options_.process_id)); // no actor here
      own_endpoints_.push_back(nullptr);
      cpu_pools_.push_back(nullptr);
      memory_sources_.push_back({});
      continue;
    }
    if (dev.platform == platform::cpu) {
      auto pool = std::make_shared<buffer_pool>(dev.id, options_.cpu_memory_limit);
      cpu_pools_.push_back(pool);
      memory_sources_.push_back([pool] { return pool->stats(); });
      add_own(dev, spawn_cpu_device(*system_, dev, pool, stop_));
      continue;
    }
#if AM_HAVE_CUDA
    add_own(dev, spawn_cuda_device(*system_, dev, stop_));
    cpu_pools_.push_back(nullptr);
    // The CUDA memory-statistics hook (devices/cuda/cuda_memory.hpp).
    memory_sources_.push_back([ordinal = dev.local_ordinal] { return cuda_memory_stats(ordinal); });
#endif
  }
  host_ = spawn_host_actor(*system_, options_.process_id, stop_);
  host_lane_key_ = new_receiver_key();
  if (membership_.client->directory().single_controller() && options_.process_id == 0
      && membership_.client->process_count() > 1) {
    workers_ = remote::controller_link::start(*this);
    for (auto& ep : endpoints_) // the workers' devices: driven from here, through the link
      if (ep->reach() == device_reach::own_process)
        ep = std::make_unique<remote::worker_endpoint>(ep->dev, *workers_);
  }
  if (options_.metrics_port >= 0) {
    metrics_ = std::make_unique<metrics_endpoint>(*this, options_.metrics_host,
                                                  metrics_port_of(options_.metrics_port, options_.process_id));
    log(log_level::info, "metrics for Prometheus at {}", metrics_->url());
  }
}

void runtime_impl::exit_spawned_actors() {
  for (auto* own : own_endpoints_)
    if (own && own->actor)
      caf::anon_send_exit(own->actor, caf::exit_reason::user_shutdown);
  if (host_)
    caf::anon_send_exit(host_, caf::exit_reason::user_shutdown);
  if (call_server_)
    caf::anon_send_exit(call_server_, caf::exit_reason::user_shutdown);
  if (workers_)
    workers_->stop();
  if (membership_.client)
    caf::anon_send_exit(membership_.client->actor(), caf::exit_reason::user_shutdown);
  if (membership_.supervisor)
    caf::anon_send_exit(membership_.supervisor, caf::exit_reason::user_shutdown);
}

runtime_impl::~runtime_impl() {
  if (host_task_owner() == stop_.get()) {
    // The last reference went inside one of this runtime's own host tasks: joining the actors would
    // wait for this very task. Tell every actor to stop and leave the actor system to the process.
    log(log_level::error, "an actormesh runtime was released inside one of its own host tasks; its "
                          "actors stop, but the actor system is not joined");
    stop_->raise();
    exit_spawned_actors();
    own_endpoints_.clear();
    endpoints_.clear();
    host_ = nullptr;
    (void)system_.release();
    return;
  }
  stop();
}

runtime_context::call_guard::call_guard(runtime_context& rt) : rt_(rt) {
  // Counted first, checked second (both sequentially consistent): either stop() sees this call and
  // waits for it, or this call sees the stop signal and leaves.
  rt_.calls_in_progress_.fetch_add(1, std::memory_order_seq_cst);
  if (rt_.stop_->raised()) {
    rt_.calls_in_progress_.fetch_sub(1, std::memory_order_seq_cst);
    throw runtime_error("The actormesh runtime has stopped: no new calls are accepted");
  }
}

runtime_context::call_guard::~call_guard() {
  rt_.calls_in_progress_.fetch_sub(1, std::memory_order_seq_cst);
}

void runtime_impl::stop() {
  if (host_task_owner() == stop_.get())
    throw runtime_error("The actormesh runtime cannot stop from inside one of its own host tasks (it "
                        "would wait for the task that asks): stop it from a user thread");
  std::lock_guard<std::mutex> serialize(stop_mutex_);
  if (stopped_)
    return;
  metrics_.reset(); // no scrape reads the runtime while it stops
  drain_for_peers();
  stop_->raise();
  // Threads issuing a call finish issuing it (a few microseconds: a guard never waits on an actor).
  while (calls_in_progress_.load(std::memory_order_seq_cst) > 0)
    std::this_thread::yield();
  // Queued calls fail now, with their futures: nothing more is queued after this point.
  {
    std::lock_guard<std::mutex> guard(outboxes_mutex_);
    for (auto& weak : outboxes_)
      if (auto box = weak.lock())
        box->close();
    outboxes_.clear();
  }
  // The controller tells its workers, whose serve() then returns; what still waits on them fails.
  if (workers_)
    workers_->stop();
  // A distributed shutdown: this process stays (its actors still serve) until every process has
  // stopped or failed, or the shutdown timeout passes.
  // Services of the floors above (shard transfers) end first, while the other processes are
  // still there to finish what they exchange with this one.
  {
    std::vector<std::pair<const void*, std::shared_ptr<void>>> services;
    {
      std::lock_guard<std::mutex> guard(services_mutex_);
      services.swap(services_);
    }
    while (!services.empty())
      services.pop_back(); // newest first
  }
  // (In local mode too: a one-process cluster leaves at once, and the supervisor then takes the
  // client's exit for a departure rather than a failure.)
  membership_.client->leave(options_.shutdown_timeout);
  for (auto* own : own_endpoints_)
    if (own)
      send_urgent_exit(own->actor);
  send_urgent_exit(host_);
  send_urgent_exit(call_server_);
  send_urgent_exit(membership_.client->actor());
  send_urgent_exit(membership_.supervisor);
  // Every detached actor has sent its last messages before the middleman stops (exit_watch.hpp).
  exits_.wait();
  for (auto* own : own_endpoints_)
    if (own)
      own->actor = nullptr;
  host_ = nullptr;
  call_server_ = nullptr;
  membership_.supervisor = nullptr;
  membership_.listener.reset(); // its thread hands sockets to the actor system below
  system_.reset(); // joins every actor: each finishes at most the call it is running
  // The stopped runtime may outlive this call in other threads' copies (current_runtime()): its
  // pools keep no free memory meanwhile.
  for (auto& pool : cpu_pools_)
    if (pool)
      pool->trim();
  membership_.client->close("The actormesh runtime has stopped");
  observability::runtime_trace_stop(); // written once every actor has ended
  stopped_ = true;
  log(log_level::info, "runtime stopped");
}

void runtime_impl::serve() {
  if (!call_server_)
    throw runtime_error("serve(): this process is not a worker (run it with role worker: --am-role worker or "
                        "AM_ROLE=worker)");
  auto done = controller_stopped_.get_future();
  while (!done.wait_for(std::chrono::milliseconds(50))) {
    if (stop_->raised())
      throw runtime_error("The actormesh runtime has stopped while serving its controller");
    if (membership_.client->coordinator_lost() || membership_.client->failure_of(0))
      membership_.client->check_alive({0}); // throws the coordinator's process_failure_error
  }
}

void runtime_impl::add_stop_drain(std::function<void(std::chrono::steady_clock::time_point)> drain) {
  std::lock_guard<std::mutex> guard(stop_drains_mutex_);
  stop_drains_.push_back(std::move(drain));
}

void runtime_impl::drain_for_peers() {
  if (!membership_.client || membership_.client->process_count() <= 1
      || membership_.client->directory().single_controller())
    return; // one process, or a single-controller cluster (its controller drives every device)
  std::vector<std::function<void(std::chrono::steady_clock::time_point)>> drains;
  {
    std::lock_guard<std::mutex> guard(stop_drains_mutex_);
    drains.swap(stop_drains_); // run once: the services they point into go later in stop()
  }
  auto deadline = std::chrono::steady_clock::now() + options_.shutdown_timeout;
  for (auto& drain : drains)
    drain(deadline);
}

std::shared_ptr<void> runtime_impl::service_slot(const void* key, const char* name,
                                                 const std::function<std::shared_ptr<void>()>& make) {
  std::lock_guard<std::mutex> guard(services_mutex_);
  for (auto& [held, value] : services_)
    if (held == key)
      return value;
  if (stop_->raised())
    throw runtime_error(std::string("The actormesh runtime has stopped: no new calls are accepted (asked for: ")
                        + name + ")");
  auto made = make();
  services_.emplace_back(key, made);
  return made;
}

void runtime_impl::register_outbox(const std::shared_ptr<device_outbox>& box) {
  std::lock_guard<std::mutex> guard(outboxes_mutex_);
  std::erase_if(outboxes_, [](auto& weak) { return weak.expired(); });
  outboxes_.push_back(box);
}

const device_endpoint& runtime_impl::endpoint(int device_id) const {
  if (device_id < 0 || static_cast<std::size_t>(device_id) >= endpoints_.size())
    throw value_error("Unknown device id " + std::to_string(device_id) + " (this runtime has "
                      + std::to_string(endpoints_.size()) + " devices)");
  return *endpoints_[static_cast<std::size_t>(device_id)];
}

namespace {

/// `CudaDevice(id=3) of process 0 (local ordinal 0)`: every field a descriptor is checked on.
std::string describe(const device& d) {
  return to_string(d) + " of process " + std::to_string(d.process_index) + " (local ordinal "
         + std::to_string(d.local_ordinal) + ")";
}

} // namespace

void runtime_impl::check_known(const device& d) const {
  if (d.id < 0 || static_cast<std::size_t>(d.id) >= endpoints_.size())
    throw value_error("Unknown device " + describe(d) + ": this runtime has devices with ids 0 to "
                      + std::to_string(static_cast<long>(endpoints_.size()) - 1));
  auto& ep = *endpoints_[static_cast<std::size_t>(d.id)];
  if (!(ep.dev == d))
    throw value_error("Unknown device " + describe(d) + ": this runtime's device " + std::to_string(d.id)
                      + " is " + describe(ep.dev));
}

const device_endpoint& runtime_impl::route(const device& d) const {
  check_known(d);
  return *endpoints_[static_cast<std::size_t>(d.id)];
}

const actor_endpoint& runtime_impl::own_endpoint(const device& d) const {
  check_known(d);
  if (auto* own = own_endpoints_[static_cast<std::size_t>(d.id)])
    return *own;
  throw not_addressable(d, options_.process_id);
}

device_reach runtime_impl::reach(const device& d) const {
  return route(d).reach();
}

std::vector<device> runtime_impl::all_devices() const {
  std::vector<device> out;
  out.reserve(endpoints_.size());
  for (auto& ep : endpoints_)
    out.push_back(ep->dev);
  return out;
}

platform runtime_impl::default_platform() const noexcept {
  return gpus_.count > 0 ? platform::cuda : platform::cpu;
}

memory_stats runtime_impl::device_memory_stats(int device_id) const {
  auto& ep = endpoint(device_id);
  auto& source = memory_sources_[static_cast<std::size_t>(device_id)];
  if (!source) {
    if (ep.dev.platform == platform::cuda)
      throw value_error("memory statistics for CUDA devices are not available in this build");
    throw value_error("memory statistics are not available for " + to_string(ep.dev));
  }
  return source();
}

std::shared_ptr<buffer_pool> runtime_impl::cpu_pool(int device_id) const {
  endpoint(device_id);
  return cpu_pools_[static_cast<std::size_t>(device_id)];
}

std::shared_ptr<runtime_impl> current_runtime() {
  thread_local runtime_cache cache;
  if (cache.generation != current_generation.load(std::memory_order_acquire)) {
    std::shared_ptr<runtime_impl> previous; // a stopped runtime's last copy goes outside the lock
    {
      std::lock_guard<std::mutex> guard(current_mutex);
      previous = std::exchange(cache.impl, current);
      cache.generation = current_generation.load(std::memory_order_relaxed);
    }
  }
  if (!cache.impl)
    throw runtime_error("The actormesh runtime is not running: create an am::runtime first");
  return cache.impl;
}

std::shared_ptr<runtime_context> current_context() { return current_runtime(); }

remote::worker_hosts* runtime_impl::worker_hosts() const noexcept { return workers_.get(); }

caf::actor_system& actor_system_of(runtime_context& context) { return impl_of(context).system(); }

void runtime_impl::open_for_calls() {
  if (call_server_)
    caf::anon_send(call_server_, remote::ready_atom::value);
}

void set_current_runtime(std::shared_ptr<runtime_impl> impl) {
  std::lock_guard<std::mutex> guard(current_mutex);
  if (current)
    throw runtime_error("An actormesh runtime is already running in this process");
  current = std::move(impl);
  current_generation.fetch_add(1, std::memory_order_release);
}

void clear_current_runtime(const runtime_impl* impl) {
  std::shared_ptr<runtime_impl> dropped; // freed outside the lock
  std::lock_guard<std::mutex> guard(current_mutex);
  if (current.get() == impl) {
    dropped.swap(current);
    current_generation.fetch_add(1, std::memory_order_release);
  }
}

} // namespace am::detail
