#include "multihost/detail/world_communicator.hpp"

#include "actors/errors.hpp"
#include "devices/collectives/world.hpp"
#include "devices/detail/runtime_impl.hpp"

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

} // namespace

communicator& world_communicator() {
  auto rt = current_runtime();
  auto holder = std::static_pointer_cast<world_holder>(
      rt->service("am.multihost", [] { return std::make_shared<world_holder>(); }));
  std::lock_guard<std::mutex> guard(holder->mutex);
  if (!holder->comm) {
    if (!holder->failed.empty())
      throw runtime_error("The multihost utilities' communicator could not be created earlier, so they refuse "
                          "further operations: " + holder->failed);
    try {
      holder->comm = make_communicator("am.multihost");
    } catch (const std::exception& e) {
      holder->failed = e.what();
      throw;
    }
  }
  return *holder->comm;
}

} // namespace am::detail
