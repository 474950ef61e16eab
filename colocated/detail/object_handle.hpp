/// What the copies of one colocated object wrapper share on the caller's side: the object's record
/// and one function core per method name (so each method's learned output specs are kept).
#ifndef ACTORMESH_COLOCATED_DETAIL_OBJECT_HANDLE_HPP
#define ACTORMESH_COLOCATED_DETAIL_OBJECT_HANDLE_HPP

#include "actormesh/colocated/detail/function_core.hpp"
#include "actormesh/colocated/detail/object_record.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace am::detail {

/// The user's hold on an object: the object wrappers and the method wrappers taken from them share
/// one (calls in flight do not). The thread that lets go of the last one owes the object's
/// destruction, which its next colocated call waits for (JAX's order: an object deleted is gone
/// before the next call).
class user_reference {
public:
  explicit user_reference(std::shared_ptr<const object_record> record) : record_(std::move(record)) {}
  ~user_reference();
  user_reference(const user_reference&) = delete;
  user_reference& operator=(const user_reference&) = delete;

private:
  std::shared_ptr<const object_record> record_;
};

class object_handle {
public:
  explicit object_handle(std::shared_ptr<const object_record> record)
      : record_(record), user_(std::make_shared<const user_reference>(std::move(record))) {}

  /// The core of method `name` (made on first use).
  std::shared_ptr<const function_core> method_core(const std::string& name);

  /// The record.
  const std::shared_ptr<const object_record>& record() const noexcept { return record_; }

private:
  std::shared_ptr<const object_record> record_;
  std::shared_ptr<const user_reference> user_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const function_core>> cores_;
};

} // namespace am::detail

#endif // ACTORMESH_COLOCATED_DETAIL_OBJECT_HANDLE_HPP
