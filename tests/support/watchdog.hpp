// A bound on a test body that could hang: the body runs on its own thread; if it has not finished
// within the limit the process reports which test hung, with every thread's stack (gdb), and exits
// with failure, so a regression shows as a failed test with a reason instead of ctest's timeout.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include <unistd.h>

namespace am::test {

/// Runs `body`, rethrowing what it throws; exits the process with status 1 when it takes longer
/// than `limit`.
inline void run_bounded(const std::string& what, std::chrono::seconds limit, const std::function<void()>& body) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr error;
  std::thread runner([&] {
    try {
      body();
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> guard(m);
    done = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> guard(m);
  if (!cv.wait_for(guard, limit, [&] { return done; })) {
    std::fprintf(stderr, "HUNG: %s did not finish within %lld s\n", what.c_str(),
                 static_cast<long long>(limit.count()));
    std::fflush(stderr);
    // Every thread's stack, so that a hang seen once (under load, in CI) can be explained: gdb
    // attaches for a moment (where it is installed and ptrace is allowed; otherwise it says why).
    auto command = "gdb -batch -nx -p " + std::to_string(::getpid())
                   + " -ex 'thread apply all bt 30' 2>&1 | grep -v '^\\[New LWP' | head -c 200000 >&2";
    if (std::system(command.c_str()) != 0)
      std::fprintf(stderr, "(no thread stacks: gdb failed)\n");
    std::_Exit(1);
  }
  guard.unlock();
  runner.join();
  if (error)
    std::rethrow_exception(error);
}

} // namespace am::test
