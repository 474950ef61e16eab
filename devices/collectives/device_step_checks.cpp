#include "devices/collectives/device_step_checks.hpp"

#include "actors/detail/fnv1a.hpp"
#include "actormesh/actors/errors.hpp"

#include <algorithm>

namespace am::detail {

namespace {

/// The host communicator's name: the same in every process, within the 200 characters a name may
/// have and without '/', whatever the device communicator is called.
std::string checks_name_of(const std::string& name) {
  fnv1a64 h;
  h.add_text(name);
  return "am.device-checks." + h.hex();
}

} // namespace

device_step_checks::device_step_checks(cluster_services& cluster, std::vector<int> processes, std::string name,
                                       const std::string& creation, const std::string& bind_address,
                                       std::chrono::milliseconds timeout)
    : name_(std::move(name)), processes_(std::move(processes)) {
  if (processes_.size() < 2)
    return;
  checks_ = std::make_unique<communicator>(cluster, processes_, checks_name_of(name_), bind_address, timeout);
  checks_->agree("Creation of NCCL communicator '" + name_ + "'", creation, timeout);
}

int device_step_checks::rank_of(int process) const {
  auto it = std::lower_bound(processes_.begin(), processes_.end(), process);
  if (it == processes_.end() || *it != process)
    throw value_error("NCCL communicator '" + name_ + "': process " + std::to_string(process)
                      + " is not one of its processes");
  return static_cast<int>(it - processes_.begin());
}

void device_step_checks::collective(std::uint64_t step, const std::string& signature,
                                    std::chrono::milliseconds timeout) {
  if (!checks_)
    return;
  checks_->agree("Collective " + std::to_string(step) + " of NCCL communicator '" + name_ + "'", signature, timeout);
}

void device_step_checks::pair(int from, int to, int from_process, int to_process, const std::string& signature,
                              std::chrono::milliseconds timeout) {
  if (!checks_ || from_process == to_process)
    return;
  const std::uint64_t step = pair_steps_[{from, to}]++;
  checks_->agree_pair(rank_of(from_process), rank_of(to_process),
                      "Send/recv " + std::to_string(step) + " from rank " + std::to_string(from) + " to rank "
                        + std::to_string(to) + " of NCCL communicator '" + name_ + "'",
                      signature, timeout);
}

} // namespace am::detail
