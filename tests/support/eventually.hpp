// Waiting in a test for something another thread makes true, bounded in time.
#pragma once

#include <chrono>
#include <thread>

namespace am::testing {

/// True once `pred()` holds, polled every millisecond for up to 5 s; then its last answer.
template <class P>
bool eventually(P pred) {
  for (int i = 0; i < 5000; ++i) {
    if (pred())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return pred();
}

} // namespace am::testing
