/// A colocated object as the host side knows it: a process-unique id, its class's registered
/// name, and how to construct it (the constructor arguments the wrapper recorded). Wrappers and the
/// calls in flight hold it; when the last of them lets go, its instances are destroyed.
#ifndef ACTORMESH_COLOCATED_DETAIL_OBJECT_RECORD_HPP
#define ACTORMESH_COLOCATED_DETAIL_OBJECT_RECORD_HPP

#include "actormesh/actors/future.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace am::detail {

class object_store;

/// Builds the instance (type-erased: a T held by a shared_ptr<void>).
using instance_factory = std::function<std::shared_ptr<void>()>;

/// How the instance is built in a worker process: the constructor's registry key
/// (colocated/detail/constructor_wire.hpp) and how to encode the arguments, when their types
/// travel (empty when not). Encoding waits for an am::array argument's data, so it runs only when
/// a worker first needs the object.
struct travelling_arguments {
  std::string constructor;
  std::function<std::string()> encode;
};

struct object_record {
  /// A record with a fresh id.
  object_record(std::string class_name, instance_factory factory, travelling_arguments remote = {});

  /// Destroys the instances, asynchronously (each after the calls it already received); then
  /// resolves when_destroyed().
  ~object_record();

  object_record(const object_record&) = delete;
  object_record& operator=(const object_record&) = delete;

  const std::uint64_t uid;
  const std::string class_name;
  const instance_factory factory;
  const travelling_arguments remote;

  /// The constructor arguments encoded for a worker (at the first call that needs them, then
  /// kept), or null when their types do not travel.
  const std::string* travelling_bytes() const;

  /// Remembers the store its instances live in (the runtime's, set at the first call there).
  void used_in(const std::shared_ptr<object_store>& store) const;

  /// Remembers that worker process `p` holds instances (its first call there is being sent), so
  /// that the last copy's going tells that worker to destroy them.
  void used_in_worker(int p) const;

  /// Resolves once this process's instances of the object are destroyed (those of worker
  /// processes are told to go, not waited for): after the record's end and the calls it had.
  future<void> when_destroyed() const;

private:
  mutable std::mutex mutex_;
  mutable std::once_flag encoded_once_;
  mutable std::string encoded_;
  mutable std::optional<promise<void>> destroyed_; // made by the first when_destroyed()
  mutable std::weak_ptr<object_store> store_;
  mutable std::set<int> workers_;
};

} // namespace am::detail

#endif // ACTORMESH_COLOCATED_DETAIL_OBJECT_RECORD_HPP
