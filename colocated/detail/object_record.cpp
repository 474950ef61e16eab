#include "colocated/detail/object_record.hpp"

#include "colocated/detail/object_store.hpp"

#include <atomic>

namespace am::detail {

namespace {
std::uint64_t next_uid() {
  static std::atomic<std::uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

object_record::object_record(std::string name, instance_factory make)
    : uid(next_uid()), class_name(std::move(name)), factory(std::move(make)) {}

object_record::~object_record() {
  std::shared_ptr<object_store> store;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    store = store_.lock();
  }
  if (store) // else never called, or its runtime has stopped (and destroyed the instances)
    release_instances(*store, uid);
}

void object_record::used_in(const std::shared_ptr<object_store>& store) const {
  std::lock_guard<std::mutex> guard(mutex_);
  store_ = store;
}

} // namespace am::detail
