#include "devices/detail/runtime_impl.hpp"

#include "actormesh/build_config.hpp"
#include "actors/detail/log.hpp"
#include "actors/errors.hpp"
#include "actors/detail/host_actor.hpp"
#include "actors/lane.hpp"
#include "devices/detail/cpu_device.hpp"

#if AM_HAVE_CUDA
#include "devices/cuda/cuda_device.hpp"
#include "devices/cuda/cuda_memory.hpp"
#endif

#include <caf/atom.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <mutex>

namespace am::detail {

namespace {

std::mutex current_mutex;
std::shared_ptr<runtime_impl> current;

void configure_caf(caf::actor_system_config& cfg, const resolved_options& opts) {
  cfg.set("scheduler.policy", opts.scheduler == scheduler_policy::stealing ? caf::atom("stealing")
                                                                             : caf::atom("sharing"));
  if (opts.scheduler_threads > 0)
    cfg.set("scheduler.max-threads", static_cast<size_t>(opts.scheduler_threads));
  cfg.set("logger.verbosity", caf::atom("quiet"));
}

} // namespace

runtime_impl::runtime_impl(resolved_options opts) : options_(std::move(opts)) {
  log_level level = log_level::warning;
  parse_log_level(options_.log_level, level);
  set_log_level(level);
  configure_caf(caf_config_, options_);
  system_ = std::make_unique<caf::actor_system>(caf_config_);
  gpus_ = discover_gpus(options_.use_gpus);
  int next_id = 0;
  for (int k = 0; k < options_.cpu_devices; ++k) {
    device dev{next_id++, 0, platform::cpu, k};
    auto pool = std::make_shared<buffer_pool>(dev.id, options_.cpu_memory_limit);
    cpu_pools_.push_back(pool);
    memory_sources_.push_back([pool] { return pool->stats(); });
    endpoints_.push_back({dev, spawn_cpu_device(*system_, dev, pool), new_receiver_key()});
  }
#if AM_HAVE_CUDA
  for (int k = 0; k < gpus_.count; ++k) {
    device dev{next_id++, 0, platform::cuda, k};
    endpoints_.push_back({dev, spawn_cuda_device(*system_, dev), new_receiver_key()});
    cpu_pools_.push_back(nullptr);
    // The CUDA memory-statistics hook (devices/cuda/cuda_memory.hpp).
    memory_sources_.push_back([ordinal = k] { return cuda_memory_stats(ordinal); });
  }
#endif
  host_ = spawn_host_actor(*system_, 0);
  host_lane_key_ = new_receiver_key();
  log(log_level::info, "runtime started: {} CPU devices, {} GPUs{}{}", options_.cpu_devices,
      gpus_.count, gpus_.reason.empty() ? "" : " (", gpus_.reason.empty() ? "" : gpus_.reason + ")");
}

runtime_impl::~runtime_impl() {
  shut_down();
  endpoints_.clear();
  host_ = nullptr;
  system_.reset(); // waits for every actor to finish
  // The actors are gone: calls still queued in callers' outboxes can never run.
  std::lock_guard<std::mutex> guard(outboxes_mutex_);
  for (auto& weak : outboxes_)
    if (auto box = weak.lock())
      box->close();
}

void runtime_impl::register_outbox(const std::shared_ptr<device_outbox>& box) {
  std::lock_guard<std::mutex> guard(outboxes_mutex_);
  std::erase_if(outboxes_, [](auto& weak) { return weak.expired(); });
  outboxes_.push_back(box);
}

void runtime_impl::shut_down() {
  if (shut_down_)
    return;
  shut_down_ = true;
  for (auto& ep : endpoints_)
    caf::anon_send_exit(ep.actor, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(host_, caf::exit_reason::user_shutdown);
}

const device_endpoint& runtime_impl::endpoint(int device_id) const {
  if (device_id < 0 || static_cast<std::size_t>(device_id) >= endpoints_.size())
    throw value_error("Unknown device id " + std::to_string(device_id) + " (this runtime has "
                      + std::to_string(endpoints_.size()) + " devices)");
  return endpoints_[static_cast<std::size_t>(device_id)];
}

std::vector<device> runtime_impl::all_devices() const {
  std::vector<device> out;
  out.reserve(endpoints_.size());
  for (auto& ep : endpoints_)
    out.push_back(ep.dev);
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
  std::lock_guard<std::mutex> guard(current_mutex);
  if (!current)
    throw runtime_error("The actormesh runtime is not running: create an am::runtime first");
  return current;
}

void set_current_runtime(std::shared_ptr<runtime_impl> impl) {
  std::lock_guard<std::mutex> guard(current_mutex);
  if (impl && current)
    throw runtime_error("An actormesh runtime is already running in this process");
  current = std::move(impl);
}

} // namespace am::detail
