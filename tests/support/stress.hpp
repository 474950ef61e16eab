// Runtime options for the stress tests: the device count comes from the environment, so one stress
// executable sweeps device counts (ctest runs every stress test at AM_CPU_DEVICES=1, 8 and 64; see
// tests/CMakeLists.txt and doc/testing.md).
#pragma once

#include <actormesh.hpp>

#include <algorithm>

namespace am::test {

/// Options for a stress test's runtime: CPU devices only, and `cpu_devices` left empty so that
/// am::runtime resolves it as usual (--am-cpu-devices, else AM_CPU_DEVICES, else the default of 8).
/// A test about a fixed device count sets `cpu_devices` itself and says why.
inline options stress_options() {
  options opts;
  opts.use_gpus = false;
  return opts;
}

/// The number of CPU devices a runtime built from `stress_options()` gets, decided before it
/// starts (for sizing a test's work by its device count).
inline int stress_device_count() {
  return resolve_options(stress_options()).cpu_devices;
}

/// `total` split over the stress device count, at least `floor`: an iteration count that keeps a
/// test's total work about constant when every iteration touches every device.
inline int scaled_by_devices(int total, int floor = 1) {
  return std::max(floor, total / std::max(1, stress_device_count()));
}

} // namespace am::test
