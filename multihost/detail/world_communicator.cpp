#include "multihost/detail/world_communicator.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/collectives/runtime_communicator.hpp"
#include "devices/runtime_context.hpp"

#include <memory>
#include <mutex>
#include <string>

namespace am::detail {

namespace {

/// Held by the runtime as a service; the communicator is made lazily under its own mutex, so the
/// runtime's service table is never locked while the processes meet.
struct world_holder {
  std::mutex mutex;
  std::unique_ptr<communicator> comm;
  std::string failed; ///< why creating it failed (names are single-use: it is not made twice)
};

/// The multihost utilities' communicator of the running runtime.
const service_key<world_holder> world_key{"multihost communicator"};

} // namespace

communicator& world_communicator() {
  auto holder = current_context()->service(world_key, [] { return std::make_shared<world_holder>(); });
  std::lock_guard<std::mutex> guard(holder->mutex);
  if (!holder->comm) {
    if (!holder->failed.empty())
      throw runtime_error("The multihost utilities' communicator could not be created earlier, so they refuse "
                          "further operations: " + holder->failed);
    try {
      holder->comm = make_runtime_communicator("am.multihost");
    } catch (const std::exception& e) {
      holder->failed = e.what();
      throw;
    }
  }
  return *holder->comm;
}

} // namespace am::detail
