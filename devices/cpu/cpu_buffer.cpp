#include "devices/cpu/cpu_buffer.hpp"

#include "actormesh/actors/errors.hpp"

namespace am::detail {

cpu_buffer::cpu_buffer(am::dtype type, shape_t shape, std::shared_ptr<buffer_pool> pool)
  : buffer(type, std::move(shape), pool->device_id()), pool_(std::move(pool)) {
  block_ = pool_->allocate(byte_size());
}

cpu_buffer::~cpu_buffer() {
  pool_->release(block_);
}

cpu_buffer_view::cpu_buffer_view(buffer_ref base, shape_t shape)
  : buffer(base->dtype(), std::move(shape), base->device_id()), base_(std::move(base)) {
  if (size() != base_->size())
    throw value_error("a view must have as many elements as its base buffer");
}

buffer_ref make_cpu_buffer(am::dtype type, shape_t shape, const std::shared_ptr<buffer_pool>& pool) {
  return std::make_shared<cpu_buffer>(type, std::move(shape), pool);
}

buffer_ref reshape_view(const buffer_ref& base, const shape_t& shape) {
  if (base->shape() == shape)
    return base;
  return std::make_shared<cpu_buffer_view>(base, shape);
}

} // namespace am::detail
