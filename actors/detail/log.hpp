/// Internal logging through fmt. The level comes from AM_LOG (off, error, warning, info, debug,
/// trace); quiet by default (warnings and errors only).
#pragma once

#include <fmt/core.h>

#include <string_view>
#include <utility>

namespace am::detail {

/// Severity of a log line, most severe first.
enum class log_level { off, error, warning, info, debug, trace };

/// Parses a level name; returns false (and leaves `out`) for an unknown one.
bool parse_log_level(std::string_view text, log_level& out) noexcept;

/// The active level (read from AM_LOG on first use).
log_level current_log_level() noexcept;

/// Changes the active level (the runtime's options do this).
void set_log_level(log_level level) noexcept;

/// Writes one line to stderr, whole, with the level and the local wall-clock time to the
/// microsecond: "[actormesh WARN 2026-12-07 09:15:02.123456] text".
void write_log_line(log_level level, std::string_view text);

/// Logs a formatted line when `level` is active.
template <class... Args>
void log(log_level level, fmt::format_string<Args...> format, Args&&... args) {
  if (level == log_level::off || level > current_log_level())
    return;
  write_log_line(level, fmt::format(format, std::forward<Args>(args)...));
}

} // namespace am::detail
