// Matrix products on a CUDA device through cuBLAS (devices/cuda/cuda_blas.cpp) against the same
// programs on a CPU device: float32/float64 (and float16/bfloat16 with float accumulation), 2-D
// and batched, a y shared by every batch row, transposed operands, odd sizes, empty products; the
// integer dtypes keep the hand-written kernel (batched too). Inputs are small integers, so every
// accumulation order gives the same exact sums and the comparison is bit for bit. Exits with 4
// (skipped) where no GPU is usable.
#include "gpu/gpu_support.hpp"
#include "support/dot_cases.hpp"

using namespace am;
using namespace am::testing;

namespace {

void check_dot(const device& gpu, const device& cpu, dtype t, std::int64_t batch, std::int64_t m, std::int64_t k,
               std::int64_t n, bool y_batched, bool tx, bool ty) {
  auto c = make_dot_case(t, batch, m, k, n, y_batched, tx, ty);
  compare_with_cpu(gpu, cpu, c.p, {encode(t, c.x), encode(t, c.y)}, {});
}

} // namespace

TEST_CASE("cuBLAS products match the CPU device: 2-D, batched, shared y, transposed", "[gpu][dot]") {
  require_gpu();
  runtime rt;
  auto gpu = devices(platform::cuda).at(0);
  auto cpu = devices(platform::cpu).at(0);
  for (auto t : {dtype::float32, dtype::float64, dtype::float16, dtype::bfloat16}) {
    for (int flags = 0; flags < 4; ++flags) {
      bool tx = flags & 1, ty = flags & 2;
      check_dot(gpu, cpu, t, 0, 33, 47, 29, false, tx, ty);
      check_dot(gpu, cpu, t, 5, 17, 9, 31, true, tx, ty);
      check_dot(gpu, cpu, t, 4, 1, 13, 7, false, tx, ty);
    }
    check_dot(gpu, cpu, t, 0, 257, 129, 65, false, false, false);
    check_dot(gpu, cpu, t, 3, 0, 4, 2, true, false, false);
    check_dot(gpu, cpu, t, 2, 3, 0, 2, true, false, false); // k == 0: zeros
  }
}

TEST_CASE("integer products keep the hand-written kernel, batched too", "[gpu][dot]") {
  require_gpu();
  runtime rt;
  auto gpu = devices(platform::cuda).at(0);
  auto cpu = devices(platform::cpu).at(0);
  for (auto t : {dtype::int32, dtype::int64, dtype::uint8}) {
    check_dot(gpu, cpu, t, 0, 33, 47, 29, false, false, false);
    check_dot(gpu, cpu, t, 5, 17, 9, 31, true, false, false);
    check_dot(gpu, cpu, t, 4, 3, 13, 7, false, false, false);
  }
}

TEST_CASE("batched matmul of arrays on a CUDA device matches a CPU device", "[gpu][dot]") {
  require_gpu();
  runtime rt;
  auto gpu = devices(platform::cuda).at(0);
  auto cpu = devices(platform::cpu).at(0);
  auto xh = host_array::from_vector(small_integers(6 * 5 * 7, 1, -2.0), {6, 5, 7});
  auto yh = host_array::from_vector(small_integers(7 * 3, 2, -2.0), {7, 3});
  for (auto t : {dtype::float32, dtype::float64}) {
    auto on_gpu = matmul(device_put(xh.astype(t), gpu), device_put(yh.astype(t), gpu)).to_host();
    auto on_cpu = matmul(device_put(xh.astype(t), cpu), device_put(yh.astype(t), cpu)).to_host();
    CHECK(on_gpu.astype(dtype::float64).to_vector<double>() == on_cpu.astype(dtype::float64).to_vector<double>());
  }
}
