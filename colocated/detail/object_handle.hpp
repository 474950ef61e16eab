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

class object_handle {
public:
  explicit object_handle(std::shared_ptr<const object_record> record) : record_(std::move(record)) {}

  /// The core of method `name` (made on first use).
  std::shared_ptr<const function_core> method_core(const std::string& name);

  /// The record.
  const std::shared_ptr<const object_record>& record() const noexcept { return record_; }

private:
  std::shared_ptr<const object_record> record_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const function_core>> cores_;
};

} // namespace am::detail

#endif // ACTORMESH_COLOCATED_DETAIL_OBJECT_HANDLE_HPP
