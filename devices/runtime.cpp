#include "actormesh/devices/runtime.hpp"

#include "actormesh/actors/errors.hpp"
#include "actors/detail/log.hpp"
#include "devices/detail/runtime_impl.hpp"

#include <algorithm>

namespace am {

runtime::runtime(const options& in_code) : runtime(0, nullptr, in_code) {}

runtime::runtime(int argc, const char* const* argv, const options& in_code) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i)
    args.emplace_back(argv[i]);
  auto opts = resolve_options(in_code, args);
  auto impl = std::make_shared<detail::runtime_impl>(std::move(opts));
  detail::set_current_runtime(impl); // throws when another runtime is current: impl stops on its way out
  impl->open_for_calls();
  impl_ = std::move(impl);
}

runtime::~runtime() {
  try {
    stop();
  } catch (const std::exception& e) {
    // Only a runtime destroyed inside its own host task gets here; its impl releases what it can.
    detail::log(detail::log_level::error, "{}", e.what());
  }
}

const resolved_options& runtime::config() const {
  return impl_->config();
}

const gpu_report& runtime::gpus() const {
  return impl_->gpus();
}

void runtime::stop() {
  if (!impl_)
    return;
  impl_->stop(); // the actors are gone when this returns; impl_ itself stays (other threads may hold it)
  detail::clear_current_runtime(impl_.get());
}

void runtime::serve() {
  if (!impl_)
    throw runtime_error("serve(): the runtime has stopped");
  impl_->serve();
}

bool is_running() noexcept {
  try {
    return detail::current_runtime() != nullptr;
  } catch (...) {
    return false;
  }
}

std::vector<device> devices() {
  return devices(detail::current_runtime()->default_platform());
}

std::vector<device> devices(platform p) {
  auto rt = detail::current_runtime();
  std::vector<device> out;
  for (auto& d : rt->all_devices())
    if (d.platform == p)
      out.push_back(d);
  if (out.empty())
    throw runtime_error("Backend '" + std::string(platform_name(p)) + "' failed to initialize: "
                        + (rt->gpus().reason.empty() ? "no devices" : rt->gpus().reason)
                        + ". Available backends are ['cpu']");
  return out;
}

std::vector<device> local_devices() {
  auto all = devices();
  int me = process_index();
  all.erase(std::remove_if(all.begin(), all.end(), [me](const device& d) { return d.process_index != me; }),
            all.end());
  return all;
}

int device_count() {
  return static_cast<int>(devices().size());
}

int local_device_count() {
  return static_cast<int>(local_devices().size());
}

int process_index() {
  return detail::current_runtime()->config().process_id;
}

int process_count() {
  return detail::current_runtime()->config().num_processes;
}

platform default_platform() {
  return detail::current_runtime()->default_platform();
}

device device_by_id(int id) {
  return detail::current_runtime()->endpoint(id).dev;
}

} // namespace am
