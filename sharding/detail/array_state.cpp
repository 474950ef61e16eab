#include "sharding/detail/array_state.hpp"

#include "actormesh/actors/errors.hpp"

namespace am::detail {

void array_state::set_shards(std::vector<shard> shards) {
  auto list = std::make_shared<const std::vector<shard>>(std::move(shards));
  std::lock_guard<std::mutex> guard(mutex_);
  shards_ = std::move(list);
}

shard_list array_state::shards() const {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!deleted_)
      return shards_;
  }
  throw_deleted(*this);
}

bool array_state::delete_shards() {
  shard_list dropped; // released outside the lock: the last reference may free buffers
  std::lock_guard<std::mutex> guard(mutex_);
  if (deleted_)
    return false;
  deleted_ = true;
  dropped.swap(shards_);
  return true;
}

bool array_state::deleted() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return deleted_;
}

void throw_deleted(const array_state& s) {
  throw runtime_error("Array has been deleted with shape=" + aval_text(s.type, s.shape) + ".");
}

std::string aval_text(am::dtype type, const shape_t& shape) {
  std::string s(name(type));
  s += '[';
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + ']';
}

} // namespace am::detail
