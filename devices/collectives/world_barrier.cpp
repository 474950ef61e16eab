#include "devices/collectives/world_barrier.hpp"

#include "devices/detail/runtime_impl.hpp"

#include <numeric>
#include <vector>

namespace am::detail {

namespace {

const service_key<world_barrier> world_barrier_key{"barriers"};

} // namespace

std::shared_ptr<world_barrier> world_barrier::of(runtime_impl& rt) {
  return rt.service(world_barrier_key, [&rt] { return std::make_shared<world_barrier>(rt); });
}

void world_barrier::wait(const std::string& id, std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> one_at_a_time(mutex_);
  auto& cluster = rt_.cluster();
  if (world_ && !world_->broken()) {
    world_->barrier(id, timeout);
    return;
  }
  world_.reset();
  cluster.barrier(id, timeout);
  if (cluster.process_count() < 2)
    return;
  std::vector<int> all(static_cast<std::size_t>(cluster.process_count()));
  std::iota(all.begin(), all.end(), 0);
  world_ = std::make_unique<communicator>(cluster, std::move(all), "am.world." + std::to_string(++made_),
                                          rt_.data_plane_address(), rt_.config().collective_timeout);
}

} // namespace am::detail
