/// Errors of collectives carry where they happened: the operation, its step and the communicator.
#pragma once

#include <exception>
#include <string>

namespace am::detail {

/// `error` as the same am error type (keeping a process failure's process and devices) whose
/// message is `where + ": " + its message`. Foreign exceptions become am::runtime_error,
/// std::bad_alloc am::out_of_memory_error.
std::exception_ptr with_context(std::exception_ptr error, const std::string& where);

/// `error` as the same am error type whose message is its message followed by `note`; `error`
/// itself when `note` is empty.
std::exception_ptr with_note(std::exception_ptr error, const std::string& note);

/// The message of `error` (what() of a std::exception, else "unknown error").
std::string message_of(std::exception_ptr error);

} // namespace am::detail
