/// The hand-off between the thread that issues a collective and the worker that runs it: which of
/// the two decides when the caller's buffers are free again.
#pragma once

#include "actormesh/actors/future.hpp"

#include <atomic>
#include <exception>

namespace am::detail {

/// One operation in flight. The worker moves it from queued to checking (the cluster's sequencing
/// check, which does not touch the caller's buffers) to moving (Gloo reads and writes them) and
/// finishes it; the caller may abandon it before it is moving, and must otherwise wait for the
/// result before its buffers may be reused.
class collective_job {
public:
  /// Where a job stands when the caller gives up on it.
  enum class standing {
    abandoned, ///< it will not touch the buffers: the caller may return
    moving,    ///< the worker is moving its bytes: the caller must wait for result()
    finished,  ///< done: result() holds the outcome
  };

  /// Worker: queued -> checking. False when the caller abandoned the job.
  bool begin_check() noexcept { return advance(phase::queued, phase::checking); }

  /// Worker: checking -> moving. False when the caller abandoned the job meanwhile.
  bool begin_move() noexcept { return advance(phase::checking, phase::moving); }

  /// Worker: stores the outcome (null for success) and wakes the caller.
  void finish(std::exception_ptr error) {
    phase_.store(phase::finished, std::memory_order_release);
    if (error)
      promise_.set_error(std::move(error));
    else
      promise_.set_value();
  }

  /// Caller: abandons the job unless the worker has started moving its bytes.
  standing abandon() noexcept {
    for (;;) {
      auto current = phase_.load(std::memory_order_acquire);
      if (current == phase::moving)
        return standing::moving;
      if (current == phase::finished)
        return standing::finished;
      if (current == phase::abandoned)
        return standing::abandoned;
      if (phase_.compare_exchange_weak(current, phase::abandoned, std::memory_order_acq_rel))
        return standing::abandoned;
    }
  }

  /// The outcome, once finished.
  const future<void>& result() const noexcept { return result_; }

private:
  enum class phase { queued, checking, moving, finished, abandoned };

  bool advance(phase from, phase to) noexcept {
    return phase_.compare_exchange_strong(from, to, std::memory_order_acq_rel);
  }

  std::atomic<phase> phase_{phase::queued};
  promise<void> promise_;
  future<void> result_ = promise_.get_future();
};

} // namespace am::detail
