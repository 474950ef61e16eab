#include "actors/detail/log.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

namespace am::detail {

namespace {

log_level level_from_environment() noexcept {
  log_level level = log_level::warning;
  if (const char* env = std::getenv("AM_LOG"))
    parse_log_level(env, level);
  return level;
}

std::atomic<log_level>& active_level() noexcept {
  static std::atomic<log_level> level{level_from_environment()};
  return level;
}

} // namespace

bool parse_log_level(std::string_view text, log_level& out) noexcept {
  static constexpr std::pair<std::string_view, log_level> names[] = {
    {"off", log_level::off},     {"error", log_level::error}, {"warning", log_level::warning},
    {"warn", log_level::warning}, {"info", log_level::info},  {"debug", log_level::debug},
    {"trace", log_level::trace},
  };
  for (auto& [name, level] : names)
    if (text == name) {
      out = level;
      return true;
    }
  return false;
}

log_level current_log_level() noexcept {
  return active_level().load(std::memory_order_relaxed);
}

void set_log_level(log_level level) noexcept {
  active_level().store(level, std::memory_order_relaxed);
}

void write_log_line(log_level level, std::string_view text) {
  static constexpr const char* tags[] = {"", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
  static std::mutex mutex;
  // Wall-clock local time to the microsecond, as Python's logging and glog print it, so that lines
  // of several processes and machines line up with each other and with other programs' logs.
  const auto now = std::chrono::system_clock::now();
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm local{};
  ::localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &local);
  std::lock_guard<std::mutex> guard(mutex);
  std::fprintf(stderr, "[actormesh %s %s.%06lld] %.*s\n", tags[static_cast<int>(level)], stamp,
               static_cast<long long>(micros % 1000000), static_cast<int>(text.size()), text.data());
}

} // namespace am::detail
