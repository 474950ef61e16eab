#include "actors/buffer.hpp"

namespace am {

std::int64_t element_count(const shape_t& shape) noexcept {
  std::int64_t n = 1;
  for (auto d : shape)
    n *= d;
  return n;
}

} // namespace am
