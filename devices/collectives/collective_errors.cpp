#include "devices/collectives/collective_errors.hpp"

#include "actormesh/actors/errors.hpp"

#include <new>
#include <string>

namespace am::detail {

namespace {

/// `failure` as the same am error type (a process failure keeps its process and devices) with the
/// message `text(its message)`.
template <class Text>
std::exception_ptr rewrap(std::exception_ptr failure, Text text) {
  try {
    std::rethrow_exception(failure);
  } catch (const process_failure_error& e) {
    return std::make_exception_ptr(process_failure_error(text(e.what()), e.process(), e.failed_devices()));
  } catch (const desync_error& e) {
    return std::make_exception_ptr(desync_error(text(e.what())));
  } catch (const runtime_error& e) {
    return std::make_exception_ptr(runtime_error(text(e.what())));
  } catch (const timeout_error& e) {
    return std::make_exception_ptr(timeout_error(text(e.what())));
  } catch (const value_error& e) {
    return std::make_exception_ptr(value_error(text(e.what())));
  } catch (const type_error& e) {
    return std::make_exception_ptr(type_error(text(e.what())));
  } catch (const out_of_memory_error& e) {
    return std::make_exception_ptr(out_of_memory_error(text(e.what())));
  } catch (const error& e) {
    return std::make_exception_ptr(error(text(e.what())));
  } catch (const std::bad_alloc&) {
    return std::make_exception_ptr(out_of_memory_error(text("RESOURCE_EXHAUSTED: out of host memory")));
  } catch (const std::exception& e) {
    return std::make_exception_ptr(runtime_error(text(e.what())));
  } catch (...) {
    return std::make_exception_ptr(runtime_error(text("unknown error")));
  }
}

} // namespace

std::exception_ptr with_context(std::exception_ptr failure, const std::string& where) {
  return rewrap(failure, [&](const std::string& message) { return where + ": " + message; });
}

std::exception_ptr with_note(std::exception_ptr failure, const std::string& note) {
  if (note.empty())
    return failure;
  return rewrap(failure, [&](const std::string& message) { return message + note; });
}

std::string message_of(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

} // namespace am::detail
