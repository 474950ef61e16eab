// Runtime options for a test that wants a fixed number of CPU devices and no GPUs.
#pragma once

#include <actormesh.hpp>

namespace am::test {

/// `n` CPU devices, GPUs off.
inline options cpu_options(int n) {
  options o;
  o.cpu_devices = n;
  o.use_gpus = false;
  return o;
}

} // namespace am::test
