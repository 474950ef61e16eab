#include "devices/detail/cpu_buffer.hpp"

#include "actors/errors.hpp"

#include <cstdlib>
#include <string>

namespace am::detail {

namespace {
constexpr std::size_t alignment = 64;
}

cpu_buffer::cpu_buffer(am::dtype type, shape_t shape, int device_id)
  : buffer(type, std::move(shape), device_id) {
  auto bytes = byte_size();
  auto rounded = (bytes + alignment - 1) / alignment * alignment;
  data_ = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  if (data_ == nullptr)
    throw out_of_memory_error("RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
                              + std::to_string(bytes) + " bytes on CpuDevice(id="
                              + std::to_string(device_id) + ")");
}

cpu_buffer::~cpu_buffer() {
  std::free(data_);
}

buffer_ref make_cpu_buffer(am::dtype type, shape_t shape, int device_id) {
  return std::make_shared<cpu_buffer>(type, std::move(shape), device_id);
}

} // namespace am::detail
