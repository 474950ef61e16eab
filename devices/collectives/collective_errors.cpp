#include "devices/collectives/collective_errors.hpp"

#include "actors/errors.hpp"

#include <new>

namespace am::detail {

std::exception_ptr with_context(std::exception_ptr failure, const std::string& where) {
  const std::string prefix = where + ": ";
  try {
    std::rethrow_exception(failure);
  } catch (const process_failure_error& e) {
    return std::make_exception_ptr(process_failure_error(prefix + e.what(), e.process(), e.failed_devices()));
  } catch (const desync_error& e) {
    return std::make_exception_ptr(desync_error(prefix + e.what()));
  } catch (const runtime_error& e) {
    return std::make_exception_ptr(runtime_error(prefix + e.what()));
  } catch (const timeout_error& e) {
    return std::make_exception_ptr(timeout_error(prefix + e.what()));
  } catch (const value_error& e) {
    return std::make_exception_ptr(value_error(prefix + e.what()));
  } catch (const type_error& e) {
    return std::make_exception_ptr(type_error(prefix + e.what()));
  } catch (const out_of_memory_error& e) {
    return std::make_exception_ptr(out_of_memory_error(prefix + e.what()));
  } catch (const error& e) {
    return std::make_exception_ptr(error(prefix + e.what()));
  } catch (const std::bad_alloc&) {
    return std::make_exception_ptr(out_of_memory_error(prefix + "RESOURCE_EXHAUSTED: out of host memory"));
  } catch (const std::exception& e) {
    return std::make_exception_ptr(runtime_error(prefix + e.what()));
  } catch (...) {
    return std::make_exception_ptr(runtime_error(prefix + "unknown error"));
  }
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
