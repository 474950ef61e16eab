#include "actormesh/actors/buffer.hpp"

namespace am {

buffer::buffer(am::dtype type, shape_t shape, int device_id)
    : type_(type), shape_(std::move(shape)), device_id_(device_id), size_(element_count(shape_)),
      byte_size_(static_cast<std::size_t>(am::byte_size(shape_, type_))) {}

} // namespace am
