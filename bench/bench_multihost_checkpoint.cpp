// Checkpoint benchmark: am::multihost::save_checkpoint and restore_checkpoint of
// one float32 global array of --mib MiB split over every device of the cluster (P('x') over a flat
// mesh), against its plain POSIX peer in the same run: the same blocks written (read) with one
// open + write (read) + close per file, then a barrier, as the checkpoint's own end is collective.
//
// Bandwidth is the checkpoint's total bytes over the slowest process's time (every process times
// each round between the same two collectives), median and range over the rounds; rank 0 prints.
// The restored values are checked (element i of the array holds i), so a broken run cannot look
// fast. Files go under --dir (default /tmp: choose the disk to measure); the
// driver removes them.
//
//   MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=17179869184 actormesh launch -n 4 --cpu-devices 2 -- ./build/bench/bench_multihost_checkpoint [--mib M] [--rounds R]
#include <actormesh.hpp>

#include "bench_flags.hpp"
#include "bench_report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace mh = am::multihost;
using am::host_array;
using am::bench::percentile;
using clock_type = std::chrono::steady_clock;

/// Runs `op` warmup + rounds times; each round's seconds, the slowest process's (a max all-reduce
/// of every process's time through process_allgather, outside the timed part).
template <class Op>
std::vector<double> time_rounds(long long warmup, long long rounds, Op&& op) {
  std::vector<double> seconds;
  for (long long k = 0; k < warmup + rounds; ++k) {
    mh::sync_global_devices("checkpoint bench round");
    auto start = clock_type::now();
    op();
    const double mine = std::chrono::duration<double>(clock_type::now() - start).count();
    host_array all = mh::process_allgather(mine);
    const double* v = reinterpret_cast<const double*>(all.bytes().data());
    if (k >= warmup)
      seconds.push_back(*std::max_element(v, v + all.size()));
  }
  return seconds;
}

void io_failed(const char* what, const std::string& path) {
  throw am::runtime_error(std::string(what) + " " + path + " failed");
}

void report(const char* what, const std::string& key, const std::vector<double>& seconds, double bytes) {
  auto gbs = [&](double s) { return bytes / s / 1e9; };
  const double med = percentile(seconds, 0.5);
  std::printf("%s: median %.2f ms, %.3f GB/s (range %.3f-%.3f)\n", what, med * 1e3, gbs(med),
              gbs(percentile(seconds, 1.0)), gbs(percentile(seconds, 0.0)));
  std::printf("RESULT %s_gbs %.4f\nRESULT %s_min_gbs %.4f\nRESULT %s_max_gbs %.4f\n", key.c_str(), gbs(med),
              key.c_str(), gbs(percentile(seconds, 1.0)), key.c_str(), gbs(percentile(seconds, 0.0)));
}

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "save_checkpoint and restore_checkpoint of one global array, against plain POSIX writes and reads");
  const auto mib = std::max<long long>(1, flag.integer("--mib", 256, "MiB per operation"));
  const auto warmup = flag.integer("--warmup", 1, "untimed rounds first");
  const auto rounds = std::max<long long>(1, flag.integer("--rounds", 5, "timed rounds"));
  const std::string base = flag.text("--dir", "/tmp", "folder the checkpoints are written under");
  flag.finish();
  am::runtime rt(argc, argv);
  const int p = am::process_index();
  const auto pid = mh::broadcast_one_to_all(static_cast<std::int64_t>(::getpid()));
  const std::string dir = base + "/am_checkpoint_bench." + std::to_string(pid);
  const std::string raw_dir = dir + ".raw";
  std::filesystem::create_directories(raw_dir);

  const std::int64_t count = mib * (1 << 20) / 4;
  am::mesh flat({static_cast<std::int64_t>(am::device_count())}, am::devices(), {"x"});
  am::sharding_ptr sh = am::make_named_sharding(flat, am::P("x"));
  auto values = host_array::empty({count}, am::dtype::float32);
  float* f = reinterpret_cast<float*>(values.bytes().data());
  for (std::int64_t i = 0; i < count; ++i)
    f[i] = static_cast<float>(i % (1 << 24));
  auto ga = am::device_put(values, sh);
  std::vector<host_array> blocks;
  for (auto& s : ga.addressable_shards())
    blocks.push_back(am::shard_data(ga, s).to_host());
  const double total = static_cast<double>(count) * 4;

  auto save = time_rounds(warmup, rounds, [&] { mh::save_checkpoint(dir, std::make_tuple(ga)); });
  am::array restored;
  auto restore = time_rounds(warmup, rounds, [&] {
    auto [r] = mh::restore_checkpoint(dir, std::make_tuple(sh));
    r.block_until_ready();
    restored = r;
  });
  auto write = time_rounds(warmup, rounds, [&] {
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      const auto path = raw_dir + "/" + std::to_string(p) + "." + std::to_string(k);
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || ::write(fd, blocks[k].bytes().data(), blocks[k].nbytes()) != static_cast<ssize_t>(blocks[k].nbytes()))
        io_failed("writing", path);
      ::close(fd);
    }
    mh::sync_global_devices("raw written");
  });
  std::vector<host_array> read_blocks;
  for (auto& b : blocks)
    read_blocks.push_back(host_array::empty(b.shape(), b.dtype()));
  auto read = time_rounds(warmup, rounds, [&] {
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      const auto path = raw_dir + "/" + std::to_string(p) + "." + std::to_string(k);
      const int fd = ::open(path.c_str(), O_RDONLY);
      if (fd < 0 || ::read(fd, read_blocks[k].bytes().data(), read_blocks[k].nbytes())
                      != static_cast<ssize_t>(read_blocks[k].nbytes()))
        io_failed("reading", path);
      ::close(fd);
    }
    mh::sync_global_devices("raw read");
  });

  host_array back = mh::process_allgather(restored, true);
  const bool right = am::array_identical(back, values);
  mh::sync_global_devices("checkpoint bench done");
  if (p == 0) {
    std::filesystem::remove_all(dir);
    std::filesystem::remove_all(raw_dir);
    std::printf("checkpoint of float32[%lld] (%lld MiB) over %d processes, %zu devices each, %lld rounds: restored "
                "values %s\n", static_cast<long long>(count), mib, am::process_count(), blocks.size(), rounds,
                right ? "right" : "WRONG");
    report("  save_checkpoint", "ckpt_save", save, total);
    report("  one write per file", "posix_write", write, total);
    report("  restore_checkpoint", "ckpt_restore", restore, total);
    report("  one read per file", "posix_read", read, total);
    std::fflush(stdout);
  }
  return right ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_multihost_checkpoint", run, argc, argv); }
