// The NCCL engine on this process's GPUs (every local GPU one rank; a single rank on a one-GPU
// machine): every collective against the same computation on the host, for the dtypes that
// matter, with the sequencing checks of a one-process cluster (tests/support/local_cluster_services).
// Skipped without a GPU or without NCCL in the build.
#include "gpu/gpu_support.hpp"

#include "actormesh/build_config.hpp"
#include "devices/collectives/nccl_communicator.hpp"
#include "support/local_cluster_services.hpp"

#if AM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <thread>

#if AM_HAVE_CUDA

namespace {

using namespace std::chrono_literals;

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    FAIL(what << ": " << cudaGetErrorString(e));
}

/// Device memory of `bytes` bytes on CUDA device `ordinal`, freed with the object.
struct device_memory {
  int ordinal = 0;
  void* ptr = nullptr;
  std::size_t bytes = 0;
  device_memory(int o, std::size_t n) : ordinal(o), bytes(n) {
    cudaSetDevice(o);
    cuda_ok(cudaMalloc(&ptr, std::max<std::size_t>(n, 1)), "cudaMalloc");
  }
  ~device_memory() {
    cudaSetDevice(ordinal);
    cudaFree(ptr);
  }
  void put(const std::vector<std::byte>& host) { cuda_ok(cudaMemcpy(ptr, host.data(), host.size(), cudaMemcpyHostToDevice), "put"); }
  std::vector<std::byte> get() const {
    std::vector<std::byte> host(bytes);
    cuda_ok(cudaMemcpy(host.data(), ptr, bytes, cudaMemcpyDeviceToHost), "get");
    return host;
  }
};

/// Every local GPU as a device of process 0.
std::vector<am::device> local_gpus() {
  int n = 0;
  cudaGetDeviceCount(&n);
  std::vector<am::device> out;
  for (int k = 0; k < n; ++k)
    out.push_back({k, 0, am::platform::cuda, k});
  return out;
}

void require_nccl() {
  am::testing::require_gpu();
  if (!am::nccl_available()) {
    std::printf("SKIPPED: this build has no NCCL\n");
    std::fflush(stdout);
    std::_Exit(4);
  }
}

/// Rank r's input: sample values of `t` with seed r.
std::vector<std::vector<double>> inputs(am::dtype t, int ranks, std::size_t count) {
  std::vector<std::vector<double>> out;
  for (int r = 0; r < ranks; ++r)
    out.push_back(am::testing::sample_values(t, count, 100 + r));
  return out;
}

double combine(am::reduce_op op, const std::vector<std::vector<double>>& in, std::size_t i) {
  double v = in[0][i];
  for (std::size_t r = 1; r < in.size(); ++r)
    v = op == am::reduce_op::max ? std::max(v, in[r][i]) : op == am::reduce_op::min ? std::min(v, in[r][i]) : v + in[r][i];
  return op == am::reduce_op::mean ? v / static_cast<double>(in.size()) : v;
}

} // namespace

TEST_CASE("NCCL all-reduce of every operator agrees with the host", "[gpu][nccl]") {
  require_nccl();
  auto gpus = local_gpus();
  int n = static_cast<int>(gpus.size());
  am::test::local_cluster cluster(1);
  am::nccl_communicator comm(cluster.services(0), gpus, "nccl-all-reduce", 60s);
  CHECK(comm.size() == n);
  const std::size_t count = 1001;
  for (auto t : {am::dtype::float32, am::dtype::float64, am::dtype::int32, am::dtype::float16}) {
    for (auto op : {am::reduce_op::sum, am::reduce_op::mean, am::reduce_op::max, am::reduce_op::min}) {
      if (op == am::reduce_op::mean && (t == am::dtype::int32))
        continue;
      auto in = inputs(t, n, count);
      std::vector<std::unique_ptr<device_memory>> mem;
      std::vector<am::nccl_buffers> buffers;
      for (int r = 0; r < n; ++r) {
        mem.push_back(std::make_unique<device_memory>(r, count * am::size_of(t)));
        mem.back()->put(am::testing::encode(t, in[static_cast<std::size_t>(r)]));
        buffers.push_back({mem.back()->ptr, mem.back()->ptr, nullptr});
      }
      comm.all_reduce(buffers, count, t, op);
      std::vector<double> want(count);
      for (std::size_t i = 0; i < count; ++i)
        want[i] = combine(op, in, i);
      // NCCL adds float16 in float16 (the host in double), so it gets a float16-sized tolerance.
      am::testing::tolerance tol = t == am::dtype::float16 ? am::testing::tolerance{4e-3, 2e-3}
                                   : am::is_floating(t)   ? am::testing::tolerance{1e-5, 1e-6}
                                                          : am::testing::tolerance{};
      for (int r = 0; r < n; ++r)
        am::testing::check_close(t, mem[static_cast<std::size_t>(r)]->get(), am::testing::encode(t, want), tol,
                                 std::string("all_reduce(") + std::string(am::name(op)) + ")");
    }
  }
  CHECK_FALSE(comm.broken());
}

TEST_CASE("NCCL all-gather, reduce-scatter (even and uneven), broadcast, all-to-all and permute agree with the host",
          "[gpu][nccl]") {
  require_nccl();
  auto gpus = local_gpus();
  int n = static_cast<int>(gpus.size());
  am::test::local_cluster cluster(1);
  am::nccl_communicator comm(cluster.services(0), gpus, "nccl-shapes", 60s);
  auto t = am::dtype::float32;
  const std::size_t count = 24 * static_cast<std::size_t>(n);
  auto in = inputs(t, n, count);
  auto make = [&](std::size_t in_count, std::size_t out_count) {
    std::vector<std::pair<std::unique_ptr<device_memory>, std::unique_ptr<device_memory>>> mem;
    for (int r = 0; r < n; ++r) {
      mem.emplace_back(std::make_unique<device_memory>(r, in_count * 4), std::make_unique<device_memory>(r, out_count * 4));
      auto slice = in[static_cast<std::size_t>(r)];
      slice.resize(in_count);
      mem.back().first->put(am::testing::encode(t, slice));
    }
    return mem;
  };
  auto buffers_of = [&](auto& mem) {
    std::vector<am::nccl_buffers> out;
    for (auto& [i, o] : mem)
      out.push_back({i->ptr, o->ptr, nullptr});
    return out;
  };
  SECTION("all_gather") {
    auto mem = make(count, count * static_cast<std::size_t>(n));
    comm.all_gather(buffers_of(mem), count, t);
    std::vector<double> want;
    for (auto& v : in)
      want.insert(want.end(), v.begin(), v.end());
    for (auto& m : mem)
      am::testing::check_close(t, m.second->get(), am::testing::encode(t, want), {0, 0}, "all_gather");
  }
  SECTION("reduce_scatter, uneven") {
    const std::size_t uneven = count + 1;
    in = inputs(t, n, uneven);
    auto mem = make(uneven, am::split_block(uneven, n, 0).count);
    comm.reduce_scatter(buffers_of(mem), uneven, t, am::reduce_op::sum);
    for (int r = 0; r < n; ++r) {
      auto block = am::split_block(uneven, n, r);
      std::vector<double> want;
      for (std::size_t i = block.offset; i < block.offset + block.count; ++i)
        want.push_back(combine(am::reduce_op::sum, in, i));
      auto got = mem[static_cast<std::size_t>(r)].second->get();
      got.resize(block.count * 4);
      am::testing::check_close(t, got, am::testing::encode(t, want), {1e-6, 1e-5}, "reduce_scatter");
    }
  }
  SECTION("broadcast") {
    auto mem = make(count, count);
    comm.broadcast(buffers_of(mem), count, t, 0);
    for (auto& m : mem)
      am::testing::check_close(t, m.second->get(), am::testing::encode(t, in[0]), {0, 0}, "broadcast");
  }
  SECTION("all_to_all") {
    auto mem = make(count, count);
    comm.all_to_all(buffers_of(mem), count, t);
    std::size_t block = count / static_cast<std::size_t>(n);
    for (int j = 0; j < n; ++j) {
      std::vector<double> want;
      for (int i = 0; i < n; ++i)
        for (std::size_t k = 0; k < block; ++k)
          want.push_back(in[static_cast<std::size_t>(i)][static_cast<std::size_t>(j) * block + k]);
      am::testing::check_close(t, mem[static_cast<std::size_t>(j)].second->get(), am::testing::encode(t, want), {0, 0},
                               "all_to_all");
    }
  }
  SECTION("permute: a ring, and a rank without a source gets zeros") {
    std::vector<std::pair<int, int>> ring;
    for (int r = 0; r < n; ++r)
      ring.emplace_back(r, (r + 1) % n);
    auto mem = make(count, count);
    comm.permute(buffers_of(mem), count, t, ring);
    for (int r = 0; r < n; ++r)
      am::testing::check_close(t, mem[static_cast<std::size_t>(r)].second->get(),
                               am::testing::encode(t, in[static_cast<std::size_t>((r + n - 1) % n)]), {0, 0}, "ring");
    auto fresh = make(count, count);
    comm.permute(buffers_of(fresh), count, t, {});
    for (auto& m : fresh)
      am::testing::check_close(t, m.second->get(), am::testing::encode(t, std::vector<double>(count, 0.0)), {0, 0},
                               "no source: zeros");
  }
  CHECK_FALSE(comm.broken());
}

TEST_CASE("NCCL refuses bad arguments before numbering them and stays usable", "[gpu][nccl]") {
  require_nccl();
  auto gpus = local_gpus();
  am::test::local_cluster cluster(1);
  am::nccl_communicator comm(cluster.services(0), gpus, "nccl-args", 60s);
  std::vector<am::nccl_buffers> none;
  CHECK_THROWS_AS(comm.all_reduce(none, 4, am::dtype::float32, am::reduce_op::sum), am::value_error);
  device_memory m(0, 16);
  std::vector<am::nccl_buffers> one(gpus.size(), {m.ptr, m.ptr, nullptr});
  CHECK_THROWS_AS(comm.all_reduce(one, 4, am::dtype::bool_, am::reduce_op::sum), am::type_error);
  CHECK_THROWS_AS(comm.broadcast(one, 4, am::dtype::float32, 99), am::value_error);
  CHECK_THROWS_AS(comm.permute(one, 4, am::dtype::float32, {{0, 99}}), am::value_error);
  CHECK_THROWS_AS(comm.permute(one, 4, am::dtype::float32, {{0, 0}, {0, 0}}), am::value_error);
  CHECK_THROWS_AS(am::nccl_communicator(cluster.services(0), {{0, 0, am::platform::cpu, 0}}, "nccl-cpu"),
                  am::value_error);
  if (gpus.size() == 1) {
    m.put(am::testing::encode(am::dtype::float32, {1, 2, 3, 4}));
    comm.all_reduce(one, 4, am::dtype::float32, am::reduce_op::sum);
    am::testing::check_close(am::dtype::float32, m.get(), am::testing::encode(am::dtype::float32, {1, 2, 3, 4}),
                             {0, 0}, "single-rank all_reduce");
  }
  CHECK_FALSE(comm.broken());
}

#else

TEST_CASE("NCCL tests need a CUDA build", "[gpu][nccl]") {
  std::printf("SKIPPED: built without CUDA\n");
  std::fflush(stdout);
  std::_Exit(4);
}

#endif
