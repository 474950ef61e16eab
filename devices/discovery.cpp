#include "actormesh/devices/discovery.hpp"

#include "actormesh/build_config.hpp"

#if AM_HAVE_CUDA
#include "devices/cuda/cuda_probe.hpp"
#endif

namespace am {

gpu_report discover_gpus(bool wanted) {
  gpu_report report;
  if (!wanted) {
    report.reason = "GPUs disabled by option (AM_USE_GPUS=off, --am-gpus=off or options.use_gpus)";
    return report;
  }
#if AM_HAVE_CUDA
  auto probe = detail::probe_cuda();
  report.count = probe.count;
  report.reason = probe.reason;
  report.driver = probe.driver;
#else
  report.reason = "actormesh was built without CUDA (configure with -DAM_CUDA=ON where nvcc is installed)";
#endif
  return report;
}

} // namespace am
