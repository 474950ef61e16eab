#include "observability/stats_wire.hpp"

#include "actormesh/actors/wire_codec.hpp"
#include "actormesh/actors/errors.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>

#include <bit>
#include <map>
#include <memory>

namespace am::detail::stats {

namespace {

/// The most devices or lanes one process's answer may list, and processes one cluster's.
constexpr std::size_t max_entries = 1u << 16;

void f64(wire_writer& w, double v) { w.u64(std::bit_cast<std::uint64_t>(v)); }
double f64(wire_reader& r) { return std::bit_cast<double>(r.u64()); }

void write(wire_writer& w, const runtime_stats_snapshot& s) {
  w.i32(s.process_index);
  f64(w, s.uptime_seconds);
  f64(w, s.interval_seconds);
  w.u32(static_cast<std::uint32_t>(s.devices.size()));
  for (auto& d : s.devices) {
    w.i32(d.device_id);
    w.str(d.device);
    w.u64(d.calls_queued);
    w.u64(d.calls_done);
    w.u64(d.queue_depth);
    f64(w, d.calls_per_second);
    w.u8(d.has_memory ? 1 : 0);
    w.u64(d.memory.bytes_in_use);
    w.u64(d.memory.peak_bytes_in_use);
    w.u64(d.memory.bytes_limit);
    w.u64(d.memory.bytes_reserved);
    w.u64(d.memory.num_allocs);
  }
  w.u32(static_cast<std::uint32_t>(s.lanes.size()));
  for (auto& l : s.lanes) {
    w.u64(l.caller);
    w.u64(l.tasks_queued);
    w.u64(l.tasks_done);
    w.u64(l.queue_depth);
    f64(w, l.tasks_per_second);
    w.u8(l.running ? 1 : 0);
  }
  w.u64(static_cast<std::uint64_t>(s.transfers.bytes_in_flight));
  w.u64(s.transfers.bytes_sent);
  w.u64(s.transfers.bytes_received);
  w.u64(s.transfers.transfers);
}

std::size_t count(wire_reader& r, const char* what) {
  auto n = r.u32();
  if (n > max_entries)
    throw value_error(std::string("malformed stats message: ") + std::to_string(n) + " " + what);
  return n;
}

runtime_stats_snapshot read_snapshot(wire_reader& r) {
  runtime_stats_snapshot s;
  s.process_index = r.i32();
  s.uptime_seconds = f64(r);
  s.interval_seconds = f64(r);
  auto devices = count(r, "devices");
  for (std::size_t i = 0; i < devices; ++i) {
    device_activity d;
    d.device_id = r.i32();
    d.device = r.str(1024);
    d.calls_queued = r.u64();
    d.calls_done = r.u64();
    d.queue_depth = r.u64();
    d.calls_per_second = f64(r);
    d.has_memory = r.u8() != 0;
    d.memory.bytes_in_use = r.u64();
    d.memory.peak_bytes_in_use = r.u64();
    d.memory.bytes_limit = r.u64();
    d.memory.bytes_reserved = r.u64();
    d.memory.num_allocs = r.u64();
    s.devices.push_back(std::move(d));
  }
  auto lanes = count(r, "lanes");
  for (std::size_t i = 0; i < lanes; ++i) {
    lane_activity l;
    l.caller = r.u64();
    l.tasks_queued = r.u64();
    l.tasks_done = r.u64();
    l.queue_depth = r.u64();
    l.tasks_per_second = f64(r);
    l.running = r.u8() != 0;
    s.lanes.push_back(l);
  }
  s.transfers.bytes_in_flight = static_cast<std::int64_t>(r.u64());
  s.transfers.bytes_sent = r.u64();
  s.transfers.bytes_received = r.u64();
  s.transfers.transfers = r.u64();
  return s;
}

void write(wire_writer& w, const process_stats& p) {
  w.i32(p.process);
  w.u8(p.ok ? 1 : 0);
  if (p.ok)
    write(w, p.snapshot);
  else
    w.str(p.error);
}

process_stats read_process(wire_reader& r) {
  process_stats p;
  p.process = r.i32();
  p.ok = r.u8() != 0;
  if (p.ok)
    p.snapshot = read_snapshot(r);
  else
    p.error = r.str(1u << 16);
  return p;
}

} // namespace

std::string encode(const process_stats& p) {
  wire_writer w;
  write(w, p);
  return w.take();
}

process_stats decode_process_stats(std::string_view bytes) {
  wire_reader r(bytes);
  auto p = read_process(r);
  r.finish();
  return p;
}

std::string encode(const std::vector<process_stats>& all) {
  wire_writer w;
  w.u32(static_cast<std::uint32_t>(all.size()));
  for (auto& p : all)
    write(w, p);
  return w.take();
}

std::vector<process_stats> decode_cluster_stats(std::string_view bytes) {
  wire_reader r(bytes);
  auto n = count(r, "processes");
  std::vector<process_stats> all;
  for (std::size_t i = 0; i < n; ++i)
    all.push_back(read_process(r));
  r.finish();
  return all;
}

std::string answer_stats_request(int process, const std::function<runtime_stats_snapshot()>& snapshot) {
  process_stats p;
  p.process = process;
  try {
    if (!snapshot)
      throw runtime_error("this process runs no actormesh runtime");
    p.snapshot = snapshot();
    p.ok = true;
  } catch (const std::exception& e) {
    p.error = e.what();
  }
  return encode(p);
}

caf::response_promise gather_stats(caf::event_based_actor* self, std::vector<std::pair<int, caf::actor>> clients,
                                   std::chrono::milliseconds timeout) {
  struct gathering {
    caf::response_promise promise;
    std::map<int, process_stats> answers;
    std::size_t expected = 0;
    void add(process_stats p) {
      int at = p.process;
      answers[at] = std::move(p);
      if (answers.size() < expected)
        return;
      std::vector<process_stats> all;
      for (auto& [process, answer] : answers)
        all.push_back(std::move(answer));
      promise.deliver(encode(all));
    }
  };
  auto g = std::make_shared<gathering>();
  g->promise = self->make_response_promise();
  g->expected = clients.size();
  if (clients.empty()) {
    g->promise.deliver(encode(std::vector<process_stats>{}));
    return g->promise;
  }
  auto failed = [](int process, std::string why) {
    process_stats p;
    p.process = process;
    p.error = std::move(why);
    return p;
  };
  for (auto& [process, client] : clients) {
    if (!client) {
      g->add(failed(process, "not joined (or gone)"));
      continue;
    }
    self->request(client, timeout, stats_atom::value)
      .then(
        [g, process = process, failed](const std::string& bytes) {
          try {
            auto p = decode_process_stats(bytes);
            p.process = process; // the supervisor knows who answered
            g->add(std::move(p));
          } catch (const std::exception& e) {
            g->add(failed(process, std::string("a malformed answer: ") + e.what()));
          }
        },
        [g, process = process, failed, timeout, self](const caf::error& e) {
          g->add(failed(process, e == caf::sec::request_timeout
                                   ? "no answer within " + std::to_string(timeout.count()) + " ms"
                                   : self->system().render(e)));
        });
  }
  return g->promise;
}

} // namespace am::detail::stats
