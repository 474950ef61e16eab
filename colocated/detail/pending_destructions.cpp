#include "colocated/detail/pending_destructions.hpp"

#include "colocated/detail/body_scope.hpp"

#include "actors/detail/log.hpp"

#include <chrono>
#include <vector>

namespace am::detail {

namespace {

/// How long a call waits for one destruction: the instance first runs the calls issued before
/// (a slow method delays it), so this is generous; past it the call goes on and says so.
constexpr auto destruction_wait = std::chrono::seconds(60);

thread_local std::vector<future<void>> owed;

} // namespace

void owe_destruction(future<void> destroyed) {
  std::erase_if(owed, [](const future<void>& f) { return f.ready(); }); // a thread that never calls again stays small
  owed.push_back(std::move(destroyed));
}

void settle_destructions() {
  if (owed.empty() || inside_colocated_body())
    return;
  auto waiting = std::move(owed);
  owed.clear();
  for (auto& f : waiting)
    if (!f.wait_for(destruction_wait))
      log(log_level::warning, "colocated_python: an object let go of by this thread was not destroyed within {} s "
                              "(its instance is still running calls); this call goes on without waiting",
          destruction_wait.count());
}

} // namespace am::detail
