#include "devices/collectives/shared_view.hpp"

#include "actormesh/actors/errors.hpp"

namespace am::detail {

shared_view::shared_view(buffer_ref base, shape_t shape, int device_id, std::size_t first)
  : buffer(base->dtype(), std::move(shape), device_id), base_(std::move(base)), offset_(first * size_of(dtype())) {
  auto from = static_cast<std::int64_t>(first);
  if (from < 0 || from > base_->size() || size() > base_->size() - from)
    throw value_error("a shared view must lie within its base buffer");
  if (!base_->host_accessible())
    throw value_error("a shared view needs a buffer in host memory");
}

buffer_ref share_with(const buffer_ref& base, const shape_t& shape, int device_id) {
  if (base->device_id() == device_id && base->shape() == shape)
    return base;
  if (element_count(shape) != base->size())
    throw value_error("a shared view must have as many elements as its base buffer");
  return std::make_shared<shared_view>(base, shape, device_id);
}

} // namespace am::detail
