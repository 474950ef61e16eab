#include "actormesh/colocated/detail/object_record.hpp"

#include "colocated/detail/object_store.hpp"
#include "colocated/detail/worker_calls.hpp"

#include <atomic>

namespace am::detail {

namespace {
std::uint64_t next_uid() {
  static std::atomic<std::uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

object_record::object_record(std::string name, instance_factory make, travelling_arguments travelling)
    : uid(next_uid()), class_name(std::move(name)), factory(std::move(make)), remote(std::move(travelling)) {}

object_record::~object_record() {
  std::shared_ptr<object_store> store;
  std::set<int> workers;
  std::optional<promise<void>> destroyed;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    store = store_.lock();
    workers.swap(workers_);
    destroyed.swap(destroyed_);
  }
  if (!workers.empty())
    release_in_workers(uid, workers); // noexcept: a stopped runtime's workers have stopped too
  if (store) // else never called, or its runtime has stopped (and destroyed the instances)
    release_instances(*store, uid, destroyed ? std::move(*destroyed) : promise<void>{});
  else if (destroyed)
    destroyed->set_value();
}

const std::string* object_record::travelling_bytes() const {
  if (!remote.encode)
    return nullptr;
  std::call_once(encoded_once_, [this] { encoded_ = remote.encode(); }); // a throw leaves it to the next call
  return &encoded_;
}

future<void> object_record::when_destroyed() const {
  std::lock_guard<std::mutex> guard(mutex_);
  if (!destroyed_)
    destroyed_.emplace();
  return destroyed_->get_future();
}

void object_record::used_in_worker(int p) const {
  std::lock_guard<std::mutex> guard(mutex_);
  workers_.insert(p);
}

void object_record::used_in(const std::shared_ptr<object_store>& store) const {
  std::lock_guard<std::mutex> guard(mutex_);
  store_ = store;
}

} // namespace am::detail
