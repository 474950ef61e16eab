#include "devices/remote/controller_link.hpp"

#include "actors/detail/log.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/lane.hpp"
#include "devices/collectives/shard_transfers.hpp"
#include "devices/detail/runtime_impl.hpp"
#include "devices/remote/remote_messages.hpp"
#include "devices/remote/remote_wire.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/spawn_options.hpp>
#include <caf/system_messages.hpp>

#include <cstring>

namespace am::detail::remote {

namespace {

/// The controller's reply sink: takes the workers' answers and notices their call servers going.
/// It holds the link weakly (the link owns it).
caf::behavior sink_behavior(caf::event_based_actor* self, std::weak_ptr<controller_link> link,
                            std::vector<caf::actor> servers) {
  self->set_default_handler(caf::drop);
  for (auto& s : servers)
    if (s)
      self->monitor(s);
  self->set_down_handler([self, link, servers](caf::down_msg& msg) {
    for (std::size_t p = 0; p < servers.size(); ++p)
      if (servers[p] && msg.source == servers[p].address())
        if (auto l = link.lock())
          l->fail_process(static_cast<int>(p), "the connection to it was lost (it died or closed it)");
  });
  return {
    [link](done_atom, const std::string& bytes) {
      if (auto l = link.lock())
        l->complete(bytes);
    },
  };
}

std::string as_string(const std::vector<std::byte>& bytes) {
  std::string out(bytes.size(), '\0');
  if (!bytes.empty())
    std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

/// The workers this thread has sent requests to, by link: when the thread ends, each is told, so
/// that the lanes it kept for the thread go (threads that come and go leave none behind there).
struct thread_callers {
  struct entry {
    const controller_link* link;
    std::weak_ptr<controller_link> alive;
    int process;
  };
  std::uint64_t caller = 0;
  std::vector<entry> sent;

  ~thread_callers() {
    for (auto& e : sent)
      if (auto l = e.alive.lock())
        l->retire_caller(e.process, caller);
  }

  void note(controller_link& link, int process) {
    for (auto& e : sent)
      if (e.link == &link && e.process == process && !e.alive.expired())
        return;
    if (sent.size() >= 64) // forget links that are gone
      std::erase_if(sent, [](auto& e) { return e.alive.expired(); });
    caller = this_caller();
    sent.push_back({&link, link.weak_from_this(), process});
  }
};

std::vector<std::byte> as_bytes(const std::string& s) {
  std::vector<std::byte> out(s.size());
  if (!s.empty())
    std::memcpy(out.data(), s.data(), s.size());
  return out;
}

} // namespace

std::shared_ptr<controller_link> controller_link::start(runtime_impl& rt) {
  auto link = std::make_shared<controller_link>(rt);
  link->sink_ = rt.system().spawn<caf::detached>(sink_behavior, std::weak_ptr<controller_link>(link), link->servers_);
  rt.watch_exit(link->sink_); // the workers hold it: stop() waits for its exit (exit_watch.hpp)
  std::weak_ptr<controller_link> weak = link;
  rt.cluster().on_process_failure([weak](int p, const std::string& notice) {
    if (auto l = weak.lock())
      l->fail_process(p, notice);
  });
  return link;
}

controller_link::controller_link(runtime_impl& rt) : rt_(rt), directory_(rt.cluster().directory()) {
  servers_.resize(directory_.hosts.size());
  for (std::size_t p = 1; p < servers_.size(); ++p) {
    servers_[p] = rt.cluster().call_server_of(static_cast<int>(p));
    if (!servers_[p])
      throw runtime_error("Worker process " + std::to_string(p) + " joined without a call server");
  }
}

controller_link::~controller_link() = default;

void controller_link::check_reachable(int process) const {
  if (stopped_)
    throw runtime_error("The actormesh runtime has stopped: no new calls are accepted");
  if (auto it = failed_.find(process); it != failed_.end())
    throw process_failure_error(it->second, process, directory_.device_ids_of(process));
}

void controller_link::send(int process, const request& q) {
  caf::actor server, sink;
  request with_releases;
  const request* out = &q;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    check_reachable(process);
    server = servers_.at(static_cast<std::size_t>(process));
    sink = sink_;
    // A handle is released only once nothing refers to it, that is after every request naming it
    // has been sent: any request from now on may carry it.
    if (auto it = released_.find(process); it != released_.end() && !it->second.handles.empty()) {
      with_releases = q;
      with_releases.released = std::move(it->second.handles);
      released_.erase(it);
      out = &with_releases;
    }
  }
  caf::send_as(sink, server, call_atom::value, encode(*out));
  if (q.caller != 0 && q.kind != request_kind::retire_caller) {
    thread_local thread_callers callers;
    callers.note(*this, process);
  }
}

void controller_link::send_or_fail(int process, const request& q) {
  try {
    send(process, q);
  } catch (...) {
    fail_waiting_ids(q.outputs, std::current_exception());
    throw;
  }
}

std::uint64_t controller_link::handle_on(int process, const shard_future& f, std::size_t position) const {
  auto where = location_of(f);
  if (!where || where->process != process)
    throw value_error("execute: input " + std::to_string(position) + " is not a shard of process "
                      + std::to_string(process) + (where ? " (it lives in process " + std::to_string(where->process) + ")"
                                                         : " (it lives in this process)")
                      + ": move it to the device first (device_put)");
  return where->handle;
}

shard_future controller_link::expect_shard(const device& d, const value_type& type,
                                           std::vector<std::uint64_t>& handles) {
  auto id = next_id_.fetch_add(1, std::memory_order_relaxed);
  auto state = std::make_shared<shard_state>(
    location{d.process_index, id, static_cast<std::uint64_t>(byte_size(type.shape, type.dtype))}, weak_from_this());
  waiting w;
  w.process = d.process_index;
  w.device = d.id;
  w.type = type;
  w.shard = state;
  w.shard_promise = promise<buffer_ref>(state);
  {
    std::lock_guard<std::mutex> guard(mutex_);
    check_reachable(d.process_index);
    waiting_.emplace(id, std::move(w));
  }
  handles.push_back(id);
  return shard_future(state);
}

std::string controller_link::encoded(const std::shared_ptr<const program>& code) {
  std::lock_guard<std::mutex> guard(encoded_mutex_);
  auto it = encoded_.find(code.get());
  if (it != encoded_.end() && it->second.first.lock() == code)
    return it->second.second;
  if (encoded_.size() >= 512) // forget programs that are gone; a working set past that starts over
    std::erase_if(encoded_, [](auto& e) { return e.second.first.expired(); });
  if (encoded_.size() >= 512)
    encoded_.clear();
  auto bytes = encode_program(*code);
  encoded_[code.get()] = {code, bytes};
  return bytes;
}

std::vector<shard_future> controller_link::execute(const device& d, std::shared_ptr<const program> code,
                                                   const std::vector<shard_future>& inputs) {
  request q;
  q.kind = request_kind::execute;
  q.caller = this_caller();
  q.device = d.id;
  for (std::size_t k = 0; k < inputs.size(); ++k)
    q.inputs.push_back(handle_on(d.process_index, inputs[k], k));
  std::vector<shard_future> out;
  try {
    for (auto& type : code->output_types())
      out.push_back(expect_shard(d, type, q.outputs));
    q.program_bytes = encoded(code);
    q.code = std::move(code);
    send(d.process_index, q);
  } catch (...) {
    fail_waiting_ids(q.outputs, std::current_exception());
    throw;
  }
  return out;
}

std::uint32_t controller_link::bulk_tag() noexcept {
  // Plan transfers' tags are hashes; these count, with the top bit set so they read differently.
  return 0x80000000u | (next_bulk_tag_.fetch_add(1, std::memory_order_relaxed) & 0x7fffffffu);
}

shard_future controller_link::upload(const device& d, std::vector<std::byte> bytes, value_type type) {
  request q;
  q.caller = this_caller();
  q.device = d.id;
  q.type = type;
  if (bytes.size() >= bulk_bytes) {
    // The bytes go through the data plane; the worker receives them onto the device.
    auto shared = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
    q.kind = request_kind::receive;
    q.peer = rt_.process_index();
    q.tag = bulk_tag();
    std::lock_guard<std::mutex> order(transfer_order_);
    auto out = expect_shard(d, type, q.outputs);
    send_or_fail(d.process_index, q);
    shard_transfers::of(rt_)->send_bytes(shared, d.process_index, q.tag);
    return out;
  }
  q.kind = request_kind::upload;
  q.bytes = as_string(bytes);
  auto out = expect_shard(d, type, q.outputs);
  send_or_fail(d.process_index, q);
  return out;
}

future<std::vector<std::byte>> controller_link::fetch_bulk(const device& d, const shard_future& shard,
                                                          const location& where) {
  promise<std::vector<std::byte>> result;
  auto out = result.get_future();
  std::weak_ptr<controller_link> weak = weak_from_this();
  int me = rt_.process_index();
  shard.on_ready([weak, shard, where, d, me, result] {
    auto link = weak.lock();
    if (!link) {
      result.set_error(std::make_exception_ptr(runtime_error("The actormesh runtime has stopped")));
      return;
    }
    if (auto error = shard.shared_state()->error()) {
      result.set_error(error);
      return;
    }
    try {
      request q;
      q.kind = request_kind::send;
      q.device = d.id;
      q.inputs.push_back(where.handle);
      q.peer = me;
      q.tag = link->bulk_tag();
      std::lock_guard<std::mutex> order(link->transfer_order_);
      link->send(d.process_index, q);
      shard_transfers::of(link->rt_)->receive_bytes(d.process_index, where.bytes, q.tag, result);
    } catch (...) {
      result.set_error(std::current_exception());
    }
  });
  return out;
}

future<std::vector<std::byte>> controller_link::fetch(const device& d, const shard_future& shard) {
  auto where = location_of(shard);
  if (where && where->process == d.process_index && where->bytes >= bulk_bytes)
    return fetch_bulk(d, shard, *where);
  request q;
  q.kind = request_kind::fetch;
  q.caller = this_caller();
  q.device = d.id;
  q.inputs.push_back(handle_on(d.process_index, shard, 0));
  auto id = next_id_.fetch_add(1, std::memory_order_relaxed);
  q.outputs.push_back(id);
  waiting w;
  w.process = d.process_index;
  w.device = d.id;
  w.is_fetch = true;
  auto result = w.bytes.get_future();
  {
    std::lock_guard<std::mutex> guard(mutex_);
    check_reachable(d.process_index);
    waiting_.emplace(id, std::move(w));
  }
  send_or_fail(d.process_index, q);
  return result;
}

host_call_issued controller_link::host_call(int process, const std::string& service, std::string payload,
                                            const std::vector<shard_future>& inputs,
                                            const std::vector<std::pair<device, value_type>>& outputs) {
  request q;
  q.kind = request_kind::host_call;
  q.caller = this_caller();
  q.service = service;
  q.bytes = std::move(payload);
  for (std::size_t k = 0; k < inputs.size(); ++k)
    q.inputs.push_back(handle_on(process, inputs[k], k));
  auto id = next_id_.fetch_add(1, std::memory_order_relaxed);
  waiting w;
  w.process = process;
  w.is_host = true;
  host_call_issued issued;
  issued.done = w.host.get_future();
  {
    std::lock_guard<std::mutex> guard(mutex_);
    check_reachable(process);
    waiting_.emplace(id, std::move(w));
  }
  q.outputs.push_back(id);
  try {
    for (auto& [d, type] : outputs) {
      if (d.process_index != process)
        throw value_error("host call: output device " + to_string(d) + " is not a device of process "
                          + std::to_string(process));
      issued.outputs.push_back(expect_shard(d, type, q.outputs));
    }
  } catch (...) {
    fail_waiting_ids(q.outputs, std::current_exception());
    throw;
  }
  send_or_fail(process, q);
  return issued;
}

shard_future controller_link::adopt(const device& d, std::uint64_t handle, const value_type& type) {
  location where{d.process_index, handle, static_cast<std::uint64_t>(byte_size(type.shape, type.dtype))};
  auto state = std::make_shared<shard_state>(where, weak_from_this());
  promise<buffer_ref> p(state);
  state->hand_over();
  p.set_value(std::make_shared<remote_buffer>(type.dtype, type.shape, d.id, where, weak_from_this()));
  return shard_future(state);
}

shard_future controller_link::move(const device& from, const shard_future& value, const device& to,
                                   const value_type& type, std::uint32_t tag) {
  int me = rt_.process_index();
  // Both ends of one direction must see its transfers in one order: the pair goes out under one
  // lock, so every direction's requests reach both ends in the order of this lock.
  std::lock_guard<std::mutex> order(transfer_order_);
  if (from.process_index == me) {
    shard_transfers::of(rt_)->send(from, value, to.process_index, tag);
  } else {
    request q;
    q.kind = request_kind::send;
    q.caller = this_caller();
    q.device = from.id;
    q.inputs.push_back(handle_on(from.process_index, value, 0));
    q.peer = to.process_index;
    q.tag = tag;
    send(from.process_index, q);
  }
  if (to.process_index == me)
    return shard_transfers::of(rt_)->receive(from.process_index, to, type, tag);
  request q;
  q.kind = request_kind::receive;
  q.caller = this_caller();
  q.device = to.id;
  q.type = type;
  q.peer = from.process_index;
  q.tag = tag;
  auto out = expect_shard(to, type, q.outputs);
  send_or_fail(to.process_index, q);
  return out;
}

void controller_link::complete(const std::string& bytes) {
  reply a;
  try {
    a = decode_reply(bytes);
  } catch (const std::exception& e) {
    log(log_level::warning, "single-controller: a worker's reply was refused: {}", e.what());
    return;
  }
  waiting w;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = waiting_.find(a.id);
    if (it == waiting_.end())
      return; // failed already (the worker was declared lost, or the controller stopped)
    w = std::move(it->second);
    waiting_.erase(it);
  }
  if (auto error = error_of(a)) {
    std::vector<waiting> one;
    one.push_back(std::move(w));
    fail_entries(one, error);
    return;
  }
  if (w.is_fetch) {
    w.bytes.set_value(as_bytes(a.bytes));
    return;
  }
  if (w.is_host) {
    w.host.set_value(host_outcome{std::move(a.bytes), std::move(a.handles)});
    return;
  }
  try {
    auto buf = std::make_shared<remote_buffer>(w.type.dtype, w.type.shape, w.device, w.shard->where(), weak_from_this());
    w.shard->hand_over();
    w.shard_promise.set_value(std::move(buf));
  } catch (...) {
    w.shard_promise.set_error(std::current_exception());
  }
}

void controller_link::fail_waiting(int process, const std::exception_ptr& error) {
  std::vector<waiting> dropped;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (process < 0 || it->second.process == process) {
        dropped.push_back(std::move(it->second));
        it = waiting_.erase(it);
      } else {
        ++it;
      }
    }
  }
  fail_entries(dropped, error);
}

void controller_link::fail_waiting_ids(const std::vector<std::uint64_t>& ids, const std::exception_ptr& error) {
  std::vector<waiting> dropped;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (auto id : ids)
      if (auto it = waiting_.find(id); it != waiting_.end()) {
        dropped.push_back(std::move(it->second));
        waiting_.erase(it);
      }
  }
  fail_entries(dropped, error);
}

void controller_link::fail_entries(std::vector<waiting>& dropped, const std::exception_ptr& error) {
  for (auto& w : dropped) {
    if (w.is_fetch)
      w.bytes.set_error(error);
    else if (w.is_host)
      w.host.set_error(error);
    else
      w.shard_promise.set_error(error);
  }
}

void controller_link::fail_process(int p, const std::string& why) {
  if (p <= 0 || static_cast<std::size_t>(p) >= servers_.size())
    return;
  std::string text;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (failed_.count(p) || stopped_)
      return;
    text = why.rfind("process ", 0) == 0 || why.rfind("Process ", 0) == 0
             ? why
             : describe_process(directory_, p) + " failed: " + why;
    failed_[p] = text;
  }
  log(log_level::warning, "single-controller: {}", text);
  fail_waiting(p, std::make_exception_ptr(process_failure_error(text, p, directory_.device_ids_of(p))));
}

void controller_link::stop() {
  std::vector<int> live;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (stopped_)
      return;
    for (std::size_t p = 1; p < servers_.size(); ++p)
      if (!failed_.count(static_cast<int>(p)))
        live.push_back(static_cast<int>(p));
  }
  request q;
  q.kind = request_kind::stop;
  for (int p : live) {
    try {
      send(p, q);
    } catch (const std::exception&) {
    }
  }
  caf::actor sink;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    stopped_ = true;
    sink.swap(sink_);
  }
  fail_waiting(-1, std::make_exception_ptr(runtime_error("The actormesh runtime has stopped")));
  if (sink)
    caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
}

void controller_link::retire_caller(int process, std::uint64_t caller) noexcept {
  try {
    request q;
    q.kind = request_kind::retire_caller;
    q.caller = caller;
    send(process, q);
  } catch (...) {
    // That worker failed or the controller stops: its lanes go with it.
  }
}

void controller_link::release(const location& where) noexcept {
  try {
    if (where.process <= 0 || static_cast<std::size_t>(where.process) >= servers_.size())
      return;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      auto& pending = released_[where.process];
      pending.handles.push_back(where.handle);
      pending.bytes += where.bytes;
      if (pending.handles.size() < release_batch && pending.bytes < release_bytes)
        return; // rides on the next request to that worker
    }
    request q;
    q.kind = request_kind::release;
    send(where.process, q);
  } catch (...) {
    // Freeing is best effort: a worker that cannot be told frees everything when it stops.
  }
}

} // namespace am::detail::remote
