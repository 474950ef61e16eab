#include "actormesh/actors/detail/resume_home.hpp"

#include "actormesh/actors/errors.hpp"

namespace am::detail {

namespace {
thread_local resume_home* current_home = nullptr;
} // namespace

std::shared_ptr<resume_home> current_resume_home() {
  if (!current_home)
    throw runtime_error("co_await on an am::future or am::task needs a coroutine run by an actor's endpoint "
                        "or by am::sync_wait (this coroutine was resumed by neither)");
  return current_home->shared_from_this();
}

resume_home_scope::resume_home_scope(resume_home* home) noexcept : saved_(current_home) { current_home = home; }

resume_home_scope::~resume_home_scope() { current_home = saved_; }

} // namespace am::detail
