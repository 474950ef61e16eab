// The actor mesh tour: user actors over processes and devices, as Monarch programs write them.
// A mesh of trainers, one per device, fits y = 3x + 1 by data-parallel gradient descent, fed by a
// data-loader actor; the driver broadcasts each step's weights and gathers the trainers' losses
// and gradients; a slice by host; a trainer that throws am::actor_fault and is restarted by its
// policy; and, across processes, a process killed with its actors reported. In one process:
//
//   ./build/demos/actor_mesh_tour
//
// Across processes (every process spawns the meshes together; process 0 drives, the others
// serve; the tour kills the last process on purpose: --keep-going lets the others end well, and the
// launch with them, where without it the launcher stops them and ends with status 137):
//
//   ./build/tools/actormesh launch -n 4 --cpu-devices 2 --keep-going -- ./build/demos/actor_mesh_tour
#include "demos/support/demo_command_line.hpp"
#include <actormesh.hpp>

#include <fmt/core.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace {

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void section(const std::string& name) { say("== " + name); }

/// A batch of samples of y = 3x + 1: the loader's answer, split by the trainers by rank.
struct batch {
  std::vector<float> x, y;
};

template <class Inspector>
bool inspect(Inspector& f, batch& b) {
  return f(b.x, b.y);
}

/// Makes the step's batch (deterministic: the same on every run).
struct data_loader {
  batch next(int step, int samples) {
    batch b;
    for (int i = 0; i < samples; ++i) {
      float x = static_cast<float>((step * samples + i) % 17) / 8.0f - 1.0f;
      b.x.push_back(x);
      b.y.push_back(3.0f * x + 1.0f);
    }
    ++served;
    return b;
  }
  int batches_served() const { return served; }
  int served = 0;
};

const auto loader_class = am::actor_class<data_loader>("tour.data_loader")
                            .endpoint("next", &data_loader::next)
                            .endpoint("batches_served", &data_loader::batches_served);

/// The gradient of one trainer's slice, and its loss.
struct gradient {
  double dw = 0, db = 0, loss = 0;
};

template <class Inspector>
bool inspect(Inspector& f, gradient& g) {
  return f(g.dw, g.db, g.loss);
}

/// One trainer per device: holds the weights, takes its slice of each batch, computes on its own
/// device with the runtime (device_put, array operations), and answers its gradient.
struct trainer {
  explicit trainer(const am::actor_point& point) : rank(point.rank), device(point.devices.at(0)) {}

  /// The gradient of slice `rank % slices` of the batch.
  gradient step(const batch& b, int slices) {
    if (poisoned)
      throw am::actor_fault("trainer " + std::to_string(rank) + " lost its optimizer state");
    auto per = static_cast<long>(b.x.size()) / slices;
    auto at = per * (rank % slices);
    std::vector<float> xs(b.x.begin() + at, b.x.begin() + at + per);
    std::vector<float> ys(b.y.begin() + at, b.y.begin() + at + per);
    auto x = am::device_put(am::host_array::from_vector(xs), device);
    auto y = am::device_put(am::host_array::from_vector(ys), device);
    auto err = x * static_cast<double>(w) + static_cast<double>(b0) - y; // on this trainer's device
    gradient g;
    g.loss = am::mean(err * err).to_host().item<float>();
    g.dw = 2 * am::mean(err * x).to_host().item<float>();
    g.db = 2 * am::mean(err).to_host().item<float>();
    return g;
  }

  void apply(double new_w, double new_b) {
    w = static_cast<float>(new_w);
    b0 = static_cast<float>(new_b);
  }

  void poison() { poisoned = true; }
  std::string where() const {
    return am::point_string(am::this_actor().axis_names, am::this_actor().point.coords) + " on "
           + am::to_string(device) + " in process " + std::to_string(am::this_actor().point.process);
  }

  int rank;
  am::device device;
  float w = 0, b0 = 0;
  bool poisoned = false;
};

const auto trainer_class = am::actor_class<trainer>("tour.trainer")
                             .endpoint("step", &trainer::step)
                             .endpoint("apply", &trainer::apply)
                             .endpoint("poison", &trainer::poison)
                             .endpoint("where", &trainer::where)
                             .supervise(am::supervision_policy{1, 60s, false}); // one restart a minute

std::string fixed(double v) { return fmt::format("{:.4f}", v); }

/// Data-parallel training driven from process 0: the loader's batch to every trainer, their
/// gradients gathered and averaged, the new weights broadcast.
void train(const am::actor_mesh<trainer>& trainers, const am::actor_mesh<data_loader>& loader, int steps) {
  double w = 0, b = 0;
  int n = static_cast<int>(trainers.size());
  for (int s = 0; s < steps; ++s) {
    auto next = loader.call_one(&data_loader::next, s, 8 * n).get(30s);
    auto grads = trainers.call(&trainer::step, next, n).get(30s);
    double dw = 0, db = 0, loss = 0;
    for (auto& g : grads) {
      dw += g.dw / n;
      db += g.db / n;
      loss += g.loss / n;
    }
    w -= 0.5 * dw;
    b -= 0.5 * db;
    trainers.broadcast(&trainer::apply, w, b);
    if (s % 10 == 0 || s == steps - 1)
      say("step " + std::to_string(s) + ": loss " + fixed(loss) + ", w " + fixed(w) + ", b " + fixed(b));
  }
  say("the loader served " + std::to_string(loader.call_one(&data_loader::batches_served).get(30s)) + " batches");
}

} // namespace

int main(int argc, char** argv) {
  am::demo::command_line cli("actor_mesh_tour", "User actor meshes over processes and devices, as Monarch programs write them "
                                                "(run alone, or under `actormesh launch -n 4`)");
  if (auto status = cli.parse(argc, argv))
    return *status;
  try {
    am::runtime rt(argc, argv);
    const int me = am::process_index();
    const int n = am::process_count();
    section("spawn");
    auto trainers = trainer_class.spawn(am::actor_layout::per_device());
    // One loader, in process 0.
    auto loader = loader_class.spawn(
      am::actor_layout({"loader"}, {1}, {am::actor_point{0, {0}, 0, {}}}));
    trainers.on_supervision([](const am::supervision_event& e) {
      say("supervision: " + e.class_name + " at " + e.point + " (process " + std::to_string(e.process) + ") "
          + am::to_string(e.what) + ": " + e.cause);
    });
    say("trainers " + trainers.layout().shape_string() + ", one per device; the loader " + loader.layout().shape_string());

    if (me == 0) {
      section("broadcast a step, gather the losses");
      train(trainers, loader, 40);

      section("a slice by host");
      auto last_host = trainers.slice("host", n - 1);
      auto places = last_host.call(&trainer::where).get(30s); // a copy: the future is a temporary
      for (auto& where : places)
        say("host " + std::to_string(n - 1) + ": trainer at " + where);

      section("a trainer that throws, restarted by its policy");
      auto one = trainers.slice("host", n - 1).slice("device", 0);
      one.call_one(&trainer::poison).get(30s);
      try {
        one.call_one(&trainer::step, batch{{1, 2}, {4, 7}}, 1).get(30s);
      } catch (const am::actor_fault& e) {
        say("the call failed: actor_fault: " + std::string(e.what()));
      }
      say("after the restart it trains again: " + std::to_string(static_cast<int>(one.call_one(&trainer::step, batch{{1, 2}, {4, 7}}, 1).get(30s).loss)) + " (a fresh trainer's loss, w = b = 0)");
    }
    am::multihost::sync_global_devices("tour.trained");

    if (n > 1) {
      section("a process killed with its actors reported");
      // The launcher stops the survivors when a process dies (SIGTERM, then SIGKILL after its
      // grace period, 5 s): they ignore the SIGTERM to report the failure first.
      std::signal(SIGTERM, SIG_IGN);
      am::multihost::sync_global_devices("tour.before_kill");
      if (me == n - 1) {
        say("process " + std::to_string(me) + " kills itself");
        std::raise(SIGKILL);
      }
      try {
        auto victim = trainers.slice("host", n - 1).slice("device", 0);
        for (int i = 0; i < 100; ++i) {
          victim.call_one(&trainer::where).get(30s);
          std::this_thread::sleep_for(50ms);
        }
      } catch (const am::actor_failure_error& e) {
        say("actor_failure_error: " + std::string(e.what()));
      }
      std::this_thread::sleep_for(300ms); // the supervision events of the other actor there
    } else {
      say("(one process: run under `actormesh launch -n 4 --cpu-devices 2` to see a killed process reported)");
    }
    say("done");
    // No stop(): under the launcher, the killed process's failure already ends the others.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "actor_mesh_tour: %s\n", e.what());
    return 1;
  }
  return 0;
}
