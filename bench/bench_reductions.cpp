// Reductions at memory speed: sum / mean / max / min of an n x n float32 array
// sharded by rows over 8 CPU devices (mesh (8,), P('x')), over every element, axis 0 and axis 1,
// each measured next to two peers in the same run:
//   - a hand-written AVX2 loop on all cores over the same values in one host buffer
//     (bench/reference_reductions.cpp; target: ours >= 0.8x it);
//   - numpy (one thread) in a co-process, bench/numpy_reduce_peer.py, run by $AM_NUMPY_PYTHON, else
//     /work/venv-jax/bin/python, else python3 (target: ours >= 1.0x numpy); skipped, with the reason,
//     when numpy is missing.
// Ours is the eager call (am::sum(x, {0}) ...) with block_until_ready. The three run in turn, one
// run each per round, so that load from other processes hits them alike; each figure is the median
// of --reps rounds after one warm-up round; ratios are peer time / our time (higher is better). Sums are also
// checked against a float64 sum of the same values (relative error printed for ours and the loop).
//
//   ./build/bench/bench_reductions [--n 8192] [--reps 5] [--devices 8]
#include "reference_reductions.hpp"

#include <actormesh.hpp>

#include "bench_flags.hpp"
#include "bench_paths.hpp"
#include "bench_report.hpp"

#include <fmt/core.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

/// The interpreter that runs the numpy peer.
std::string numpy_python() {
  if (const char* p = std::getenv("AM_NUMPY_PYTHON"))
    return p;
  if (access("/work/venv-jax/bin/python", X_OK) == 0)
    return "/work/venv-jax/bin/python";
  return "python3";
}

/// The numpy peer as a co-process: one request line in, one answer line out, each wait bounded.
class numpy_peer {
public:
  numpy_peer(const std::string& python, const std::string& script, std::int64_t n) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0)
      return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      dup2(from_child[1], 2);
      close(to_child[1]);
      close(from_child[0]);
      auto size = std::to_string(n);
      execlp(python.c_str(), python.c_str(), script.c_str(), size.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
    auto first = read_line(120);
    if (first != "ready") {
      fmt::print("numpy peer skipped: {}\n", first.empty() ? "no answer" : first);
      stop();
    }
  }

  ~numpy_peer() { stop(); }

  bool running() const { return pid_ > 0; }

  /// numpy's median seconds of `reps` runs of `op` over `axis` ("all", "0", "1") after `warm`
  /// untimed ones, or 0 when the peer is gone.
  double measure(const std::string& op, const std::string& axis, int reps, int warm) {
    if (!running())
      return 0;
    auto request = op + " " + axis + " " + std::to_string(reps) + " " + std::to_string(warm) + "\n";
    if (write(in_, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
      stop();
      return 0;
    }
    auto line = read_line(300);
    char o[16], a[16];
    double seconds = 0;
    if (std::sscanf(line.c_str(), "result %15s %15s %lf", o, a, &seconds) != 3) {
      fmt::print("numpy peer failed: {}\n", line.empty() ? "no answer in time" : line);
      stop();
      return 0;
    }
    return seconds;
  }

private:
  /// One line from the peer within `timeout_s` seconds (empty on timeout or end of output).
  std::string read_line(int timeout_s) {
    std::string line;
    while (true) {
      if (auto nl = buffered_.find('\n'); nl != std::string::npos) {
        line = buffered_.substr(0, nl);
        buffered_.erase(0, nl + 1);
        return line;
      }
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, timeout_s * 1000) <= 0)
        return {};
      char chunk[4096];
      auto got = read(out_, chunk, sizeof chunk);
      if (got <= 0) {
        auto rest = buffered_;
        buffered_.clear();
        return rest;
      }
      buffered_.append(chunk, static_cast<std::size_t>(got));
    }
  }

  void stop() {
    if (pid_ <= 0)
      return;
    (void)!write(in_, "quit\n", 5);
    close(in_);
    close(out_);
    for (int i = 0; i < 50; ++i) { // up to 5 s, then killed
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      usleep(100000);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string buffered_;
};

/// Wall seconds of one run of `f`.
template <class F>
double seconds_of(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(const std::vector<double>& v) { return am::bench::percentile(v, 0.5); }

struct reduction {
  const char* name;
  am::bench::reduce_kind kind;
  bool mean;
  am::array (*all)(const am::array&);
  am::array (*over)(const am::array&, std::vector<std::int64_t>);
};

} // namespace

int main(int argc, char** argv) {
  return am::bench::guarded_main("bench_reductions", [](int argc, char** argv) {
    am::bench::flags flag(argc, argv, "sum, mean, max and min of a sharded float32 array, against an AVX2 loop and numpy");
    const std::int64_t n = flag.integer("--n", 8192, "side of the square array");
    const int reps = static_cast<int>(flag.integer("--reps", 5, "timed repetitions (the median is reported)"));
    const int devices = static_cast<int>(flag.integer("--devices", 8, "CPU devices"));
    flag.finish();
    if (!am::bench::reference_reduce_supported()) {
      fmt::print("this CPU has no AVX2: the reference loop cannot run\n");
      return 4;
    }
    am::options opts;
    opts.cpu_devices = devices;
    opts.use_gpus = false;
    am::runtime rt(argc, argv, opts);
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

    std::vector<float> host(static_cast<std::size_t>(n * n));
    for (std::size_t i = 0; i < host.size(); ++i)
      host[i] = static_cast<float>(i % 1000) * 0.001f - 0.5f;
    am::mesh m(am::create_device_mesh({devices}, am::devices()), {"x"});
    auto x = am::device_put(am::host_array::from_vector(host, {n, n}), am::make_named_sharding(m, am::P("x")));
    x.block_until_ready();
    double exact = 0; // the float64 sum, for the error of the float32 ones
    for (float v : host)
      exact += v;

    numpy_peer numpy(numpy_python(), am::bench::source_dir() + "/numpy_reduce_peer.py", n);
    fmt::print("reductions of {}x{} float32 on {} CPU devices (P('x')), {} cores; loop: AVX2, {} threads; "
               "numpy: {}; median of {}\n",
               n, n, devices, cores, cores, numpy.running() ? "one thread" : "skipped", reps);
    fmt::print("  {:<10} {:>9} {:>9} {:>9}  {:>8} {:>8}\n", "", "ours ms", "loop ms", "numpy ms", "vs loop",
               "vs numpy");

    const reduction reductions[] = {
      {"sum", am::bench::reduce_kind::sum, false, am::sum, am::sum},
      {"mean", am::bench::reduce_kind::sum, true, am::mean, am::mean},
      {"max", am::bench::reduce_kind::max, false, am::max, am::max},
      {"min", am::bench::reduce_kind::min, false, am::min, am::min},
    };
    std::vector<float> ref_out(static_cast<std::size_t>(n));
    double worst_loop = 1e30, worst_numpy = 1e30;
    for (auto& r : reductions) {
      for (int axis : {-1, 0, 1}) {
        auto axis_name = axis < 0 ? std::string("all") : std::to_string(axis);
        auto run = [&] { return axis < 0 ? r.all(x) : r.over(x, {axis}); };
        auto loop_once = [&] {
          am::bench::reference_reduce(r.kind, host.data(), n, n, axis, ref_out.data(), cores);
          if (r.mean) {
            auto count = static_cast<float>(axis < 0 ? n * n : n);
            for (std::int64_t k = 0, e = axis < 0 ? 1 : n; k < e; ++k)
              ref_out[static_cast<std::size_t>(k)] /= count;
          }
        };
        std::vector<double> t_ours, t_loop, t_np;
        for (int round = 0; round <= reps; ++round) { // round 0 warms up
          auto a = seconds_of([&] { run().block_until_ready(); });
          auto b = seconds_of(loop_once);
          auto c = numpy.measure(r.name, axis_name, 1, round == 0 ? 1 : 0);
          if (round > 0) {
            t_ours.push_back(a);
            t_loop.push_back(b);
            t_np.push_back(c);
          }
        }
        double ours = median(t_ours), loop = median(t_loop), np = median(t_np);

        // Our values against the loop's (same values, so max/min agree exactly; sums to rounding).
        auto got = run().to_host().to_vector<float>();
        double diff = 0;
        for (std::size_t k = 0; k < got.size(); ++k)
          diff = std::max(diff, std::fabs(static_cast<double>(got[k]) - ref_out[k])
                                  / std::max(1.0, std::fabs(static_cast<double>(ref_out[k]))));
        std::string note = fmt::format("  (max rel. diff vs loop {:.1e}", diff);
        if (axis < 0 && !r.mean)
          if (r.kind == am::bench::reduce_kind::sum)
            note += fmt::format("; vs float64: ours {:.1e}, loop {:.1e}", std::fabs(got[0] - exact) / std::fabs(exact),
                                std::fabs(ref_out[0] - exact) / std::fabs(exact));
        note += ")";
        worst_loop = std::min(worst_loop, loop / ours);
        if (np > 0)
          worst_numpy = std::min(worst_numpy, np / ours);
        fmt::print("  {:<4} {:<5} {:9.2f} {:9.2f} {:>9} {:7.2f}x {:>8}{}\n", r.name, axis_name, ours * 1e3,
                   loop * 1e3, np > 0 ? fmt::format("{:.2f}", np * 1e3) : "-", loop / ours,
                   np > 0 ? fmt::format("{:.2f}x", np / ours) : "-", note);
        am::bench::ratio_line(loop / ours, fmt::format("{} {}: speed / the AVX2 loop's", r.name, axis_name));
        if (np > 0)
          am::bench::ratio_line(np / ours, fmt::format("{} {}: speed / numpy's", r.name, axis_name));
      }
    }
    fmt::print("targets: >= 0.8x the loop ({}: worst {:.2f}x), >= 1.0x numpy ({})\n",
               worst_loop >= 0.8 ? "met" : "missed", worst_loop,
               numpy.running() ? fmt::format("{}: worst {:.2f}x", worst_numpy >= 1.0 ? "met" : "missed", worst_numpy)
                               : std::string("numpy skipped"));
    return 0;
  }, argc, argv);
}
