// CAF 0.17.6's hang at the end of an actor system (devices/detail/exit_watch.hpp), made
// deterministic, and am::detail::exit_watch, which prevents it. Two processes:
//
//   exit_watch_probe hold PORT              publishes an actor on 127.0.0.1:PORT that, handed a
//                                           handle, pings it and monitors it; exits when it is down
//   exit_watch_probe own PORT guarded|bare  spawns a detached actor D, hands D to the holder (whose
//                                           node then holds a proxy of D, so this node's BASP broker
//                                           monitors D), tells D to exit and destroys its actor
//                                           system: after exit_watch::wait() when guarded, at once
//                                           when bare
//
// D's exit is slowed where the hang needs it: a hook attached after the broker's monitor (CAF runs
// exit hooks newest first, so it runs before the broker's down message is sent) waits until the
// middleman's multiplexer thread has ended, or, guarded, until the main thread waits for D. Bare,
// the down message then reaches a broker whose multiplexer is gone; it holds D, which is never
// destroyed, and ~actor_system waits forever for D's thread (the test expects "guarded" to end;
// "bare" is the check that the probe does reproduce the hang). Each wait is bounded (20 s).
#include "devices/detail/exit_watch.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;
using ping_atom = caf::atom_constant<caf::atom("am_ping")>;

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

/// Set when the multiplexer thread ends (a thread_local of that thread is destroyed), or when the
/// main thread waits for D (guarded): D's slowed exit goes on then.
struct gate {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;

  void release() {
    std::lock_guard<std::mutex> guard(mutex);
    open = true;
    changed.notify_all();
  }

  /// False when 20 s passed first.
  bool pass() {
    std::unique_lock<std::mutex> guard(mutex);
    return changed.wait_for(guard, 20s, [this] { return open; });
  }
};

gate exit_gate;

struct multiplexer_end {
  bool armed = false;
  ~multiplexer_end() {
    if (armed)
      exit_gate.release();
  }
};

std::unique_ptr<caf::actor_system_config> networked_config() {
  auto cfg = std::make_unique<caf::actor_system_config>();
  cfg->load<caf::io::middleman>();
  cfg->set("middleman.enable-automatic-connections", false);
  cfg->set("middleman.workers", static_cast<size_t>(0));
  cfg->set("logger.verbosity", caf::atom("quiet"));
  return cfg;
}

int hold(std::uint16_t port) {
  auto cfg = networked_config();
  caf::actor_system system{*cfg};
  auto holder = system.spawn([](caf::event_based_actor* self) -> caf::behavior {
    self->set_down_handler([self](caf::down_msg&) {
      say("holder: the owner's actor is down");
      self->quit();
    });
    return {
      [self](const caf::actor& d) {
        self->monitor(d);
        self->send(d, ping_atom::value);
      },
    };
  });
  auto published = system.middleman().publish(holder, port, "127.0.0.1", true);
  if (!published) {
    say("error: cannot listen on " + std::to_string(port) + ": " + system.render(published.error()));
    caf::anon_send_exit(holder, caf::exit_reason::user_shutdown);
    return 2;
  }
  say("listening");
  return 0; // ~actor_system waits until the holder has seen the owner's actor go
}

int own(std::uint16_t port, bool guarded) {
  auto cfg = networked_config();
  auto system = std::make_unique<caf::actor_system>(*cfg);
  am::detail::exit_watch watch;
  auto monitored = std::make_shared<std::promise<void>>();
  auto d = system->spawn<caf::detached>([monitored](caf::event_based_actor* self) -> caf::behavior {
    return {
      [self, monitored](ping_atom) {
        // The holder pinged D after its node made D's proxy, whose announcement reached this
        // node's broker first: the broker monitors D now, so this hook is newer and runs before.
        self->attach_functor([] {
          if (!exit_gate.pass())
            say("error: the exit gate stayed closed for 20 s");
        });
        monitored->set_value();
      },
    };
  });
  watch.watch(d); // right after the spawn: the oldest hook, run last
  system->middleman().backend().dispatch([] {
    thread_local multiplexer_end end;
    end.armed = true;
  });
  caf::actor holder;
  for (int attempt = 0; attempt < 200 && !holder; ++attempt) {
    auto found = system->middleman().remote_actor("127.0.0.1", port);
    if (found)
      holder = *found;
    else
      std::this_thread::sleep_for(100ms);
  }
  if (!holder) {
    say("error: no holder at port " + std::to_string(port));
    caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
    exit_gate.release();
    return 2;
  }
  caf::anon_send(holder, d);
  if (monitored->get_future().wait_for(20s) != std::future_status::ready) {
    say("error: the holder never pinged");
    caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
    exit_gate.release();
    return 2;
  }
  caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  d = nullptr;
  holder = nullptr;
  if (guarded) {
    exit_gate.release();
    watch.wait();
  }
  say("destroying the actor system");
  system.reset();
  say("done");
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::string mode = argc >= 3 ? argv[1] : "";
  if (mode == "hold" && argc == 3)
    return hold(static_cast<std::uint16_t>(std::stoi(argv[2])));
  if (mode == "own" && argc == 4 && (std::string(argv[3]) == "guarded" || std::string(argv[3]) == "bare"))
    return own(static_cast<std::uint16_t>(std::stoi(argv[2])), std::string(argv[3]) == "guarded");
  std::fprintf(stderr, "usage: exit_watch_probe hold PORT | own PORT guarded|bare\n");
  return 3;
}
