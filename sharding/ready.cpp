#include "actormesh/sharding/ready.hpp"

namespace am {

task<array> ready(array x) {
  for (auto& s : x.addressable_shards())
    co_await s.data;
  co_return x;
}

} // namespace am
