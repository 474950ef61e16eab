#include "devices/remote/remote_wire.hpp"

#include "actormesh/actors/wire_codec.hpp"
#include "actormesh/actors/errors.hpp"

#include <bit>
#include <limits>

namespace am::detail::remote {

namespace {

/// Requests carry at most this many handles and instructions; a shard's bytes are bounded by the
/// message itself (the reader checks the length before it allocates).
constexpr std::size_t max_handles = 1u << 16;
constexpr std::size_t max_instructions = 1u << 20;
constexpr std::size_t max_rank = 64;
constexpr std::size_t max_bytes = std::size_t{1} << 40;

[[noreturn]] void malformed(const std::string& why) {
  throw value_error("malformed single-controller request: " + why);
}

std::size_t read_count(wire_reader& r, std::size_t limit, const char* what) {
  auto n = r.u64();
  if (n > limit)
    malformed(std::to_string(n) + " " + what + " exceed the limit of " + std::to_string(limit));
  return static_cast<std::size_t>(n);
}

void write_u64s(wire_writer& w, const std::vector<std::uint64_t>& v) {
  w.u64(v.size());
  for (auto x : v)
    w.u64(x);
}

std::vector<std::uint64_t> read_u64s(wire_reader& r, std::size_t limit, const char* what) {
  auto n = read_count(r, limit, what);
  std::vector<std::uint64_t> out; // grown as read: a count larger than the message allocates nothing
  for (std::size_t k = 0; k < n; ++k)
    out.push_back(r.u64());
  return out;
}

void write_i64s(wire_writer& w, const std::vector<std::int64_t>& v) {
  w.u64(v.size());
  for (auto x : v)
    w.u64(static_cast<std::uint64_t>(x));
}

std::vector<std::int64_t> read_i64s(wire_reader& r, std::size_t limit, const char* what) {
  auto n = read_count(r, limit, what);
  std::vector<std::int64_t> out;
  for (std::size_t k = 0; k < n; ++k)
    out.push_back(static_cast<std::int64_t>(r.u64()));
  return out;
}

void write_type(wire_writer& w, const value_type& t) {
  w.u8(static_cast<std::uint8_t>(t.dtype));
  write_i64s(w, t.shape);
}

value_type read_type(wire_reader& r) {
  value_type t;
  auto code = r.u8();
  if (code >= dtype_count)
    malformed("unknown dtype code " + std::to_string(code));
  t.dtype = static_cast<am::dtype>(code);
  t.shape = read_i64s(r, max_rank, "dimensions");
  for (auto d : t.shape)
    if (d < 0)
      malformed("negative dimension " + std::to_string(d));
  byte_size(t.shape, t.dtype); // throws for a size past int64
  return t;
}

void write_program_body(wire_writer& w, const program& p) {
  w.str(p.name);
  w.u64(p.code.size());
  for (auto& ins : p.code) {
    w.u8(static_cast<std::uint8_t>(ins.op));
    write_type(w, ins.type);
    w.i32_list(std::vector<int>(ins.operands.begin(), ins.operands.end()));
    w.u64(std::bit_cast<std::uint64_t>(ins.scalar));
    w.u64(static_cast<std::uint64_t>(ins.index));
    write_i64s(w, ins.attrs);
  }
  w.i32_list(std::vector<int>(p.outputs.begin(), p.outputs.end()));
}

std::shared_ptr<const program> read_program_body(wire_reader& r) {
  auto p = std::make_shared<program>();
  p->name = r.str(4096);
  auto n = read_count(r, max_instructions, "instructions");
  for (std::size_t k = 0; k < n; ++k) {
    auto& ins = p->code.emplace_back();
    auto op = r.u8();
    if (op >= opcode_count)
      malformed("unknown opcode " + std::to_string(op));
    ins.op = static_cast<opcode>(op);
    ins.type = read_type(r);
    auto operands = r.i32_list(max_instructions);
    ins.operands.assign(operands.begin(), operands.end());
    ins.scalar = std::bit_cast<double>(r.u64());
    ins.index = static_cast<std::int64_t>(r.u64());
    // A parameter's number indexes a table as long as the program: bound it by the program.
    if (ins.op == opcode::parameter && (ins.index < 0 || static_cast<std::size_t>(ins.index) >= n))
      malformed("parameter number " + std::to_string(ins.index) + " in a program of " + std::to_string(n)
                + " instructions");
    ins.attrs = read_i64s(r, max_instructions, "attributes");
  }
  auto outputs = r.i32_list(max_instructions);
  p->outputs.assign(outputs.begin(), outputs.end());
  validate(*p); // operand order, types, parameter numbering: am::value_error naming the instruction
  return p;
}

} // namespace

std::string encode_program(const program& p) {
  wire_writer w;
  write_program_body(w, p);
  return w.take();
}

std::shared_ptr<const program> decode_program(const std::string& bytes) {
  wire_reader r(bytes);
  auto p = read_program_body(r);
  r.finish();
  return p;
}

std::shared_ptr<const program> program_cache::get(const std::string& bytes) {
  if (auto it = index_.find(bytes); it != index_.end()) {
    entries_.splice(entries_.begin(), entries_, it->second);
    return it->second->second;
  }
  auto p = decode_program(bytes);
  entries_.emplace_front(bytes, p);
  index_.emplace(entries_.front().first, entries_.begin());
  if (entries_.size() > capacity_) {
    index_.erase(entries_.back().first);
    entries_.pop_back();
  }
  return p;
}

std::string encode(const request& q) {
  wire_writer w;
  w.u8(static_cast<std::uint8_t>(q.kind));
  w.u64(q.caller);
  w.i32(q.device);
  bool has_program = q.code || !q.program_bytes.empty();
  w.u8(has_program ? 1 : 0);
  if (has_program)
    w.str(q.program_bytes.empty() ? encode_program(*q.code) : q.program_bytes);
  write_u64s(w, q.inputs);
  write_u64s(w, q.outputs);
  write_type(w, q.type);
  w.str(q.bytes);
  w.i32(q.peer);
  w.u32(q.tag);
  w.str(q.service);
  write_u64s(w, q.released);
  return w.take();
}

request decode_request(const std::string& bytes, program_cache* cache) {
  wire_reader r(bytes);
  request q;
  auto kind = r.u8();
  if (kind < static_cast<std::uint8_t>(request_kind::execute) || kind > static_cast<std::uint8_t>(request_kind::retire_caller))
    malformed("unknown request kind " + std::to_string(kind));
  q.kind = static_cast<request_kind>(kind);
  q.caller = r.u64();
  q.device = r.i32_in(0, std::numeric_limits<std::int32_t>::max(), "device id");
  if (r.u8() != 0) {
    q.program_bytes = r.str(max_bytes);
    q.code = cache ? cache->get(q.program_bytes) : decode_program(q.program_bytes);
  }
  q.inputs = read_u64s(r, max_handles, "input handles");
  q.outputs = read_u64s(r, max_handles, "output handles");
  q.type = read_type(r);
  q.bytes = r.str(max_bytes);
  q.peer = r.i32_in(0, std::numeric_limits<std::int32_t>::max(), "peer process");
  q.tag = r.u32();
  q.service = r.str(256);
  q.released = read_u64s(r, max_handles, "released handles");
  r.finish();
  // The shape each kind needs.
  auto need = [&](bool ok, const char* what) {
    if (!ok)
      malformed(std::string(what));
  };
  switch (q.kind) {
    case request_kind::execute:
      need(q.code != nullptr, "an execute request without a program");
      need(q.inputs.size() == static_cast<std::size_t>(q.code->parameter_count()),
           "an execute request whose inputs do not match its program's parameters");
      need(q.outputs.size() == q.code->outputs.size(),
           "an execute request whose outputs do not match its program's outputs");
      break;
    case request_kind::upload:
      need(q.outputs.size() == 1, "an upload request needs one output handle");
      need(q.bytes.size() == static_cast<std::size_t>(byte_size(q.type.shape, q.type.dtype)),
           "an upload request whose bytes do not match its type");
      break;
    case request_kind::fetch:
      need(q.inputs.size() == 1 && q.outputs.size() == 1, "a fetch request needs one handle and one reply id");
      break;
    case request_kind::send:
      need(q.inputs.size() == 1, "a send request needs one handle");
      break;
    case request_kind::receive:
      need(q.outputs.size() == 1, "a receive request needs one output handle");
      break;
    case request_kind::host_call:
      need(!q.outputs.empty(), "a host call request needs a reply id");
      need(!q.service.empty(), "a host call request names no service");
      break;
    case request_kind::release:
    case request_kind::stop:
    case request_kind::retire_caller:
      break;
  }
  return q;
}

std::string encode(const reply& a) {
  wire_writer w;
  w.u64(a.id);
  w.u8(static_cast<std::uint8_t>(a.status));
  w.str(a.message);
  w.i32(a.process);
  w.i32_list(a.devices);
  w.str(a.bytes);
  write_u64s(w, a.handles);
  return w.take();
}

reply decode_reply(const std::string& bytes) {
  wire_reader r(bytes);
  reply a;
  a.id = r.u64();
  auto status = r.u8();
  if (status > static_cast<std::uint8_t>(reply_status::desync))
    malformed("unknown reply status " + std::to_string(status));
  a.status = static_cast<reply_status>(status);
  a.message = r.str(1u << 20);
  a.process = r.i32();
  a.devices = r.i32_list(max_handles);
  a.bytes = r.str(max_bytes);
  a.handles = read_u64s(r, max_handles, "reply handles");
  r.finish();
  return a;
}

reply error_reply(std::uint64_t id, const std::exception_ptr& error) {
  reply a;
  a.id = id;
  a.status = reply_status::runtime_error;
  try {
    std::rethrow_exception(error);
  } catch (const process_failure_error& e) {
    a.status = reply_status::process_failure;
    a.message = e.what();
    a.process = e.process();
    a.devices = e.failed_devices();
  } catch (const desync_error& e) {
    a.status = reply_status::desync;
    a.message = e.what();
  } catch (const value_error& e) {
    a.status = reply_status::value_error;
    a.message = e.what();
  } catch (const type_error& e) {
    a.status = reply_status::type_error;
    a.message = e.what();
  } catch (const timeout_error& e) {
    a.status = reply_status::timeout;
    a.message = e.what();
  } catch (const out_of_memory_error& e) {
    a.status = reply_status::out_of_memory;
    a.message = e.what();
  } catch (const std::exception& e) {
    a.message = e.what();
  } catch (...) {
    a.message = "unknown error";
  }
  return a;
}

std::exception_ptr error_of(const reply& a) {
  switch (a.status) {
    case reply_status::ok:
      return nullptr;
    case reply_status::value_error:
      return std::make_exception_ptr(value_error(a.message));
    case reply_status::type_error:
      return std::make_exception_ptr(type_error(a.message));
    case reply_status::timeout:
      return std::make_exception_ptr(timeout_error(a.message));
    case reply_status::out_of_memory:
      return std::make_exception_ptr(out_of_memory_error(a.message));
    case reply_status::process_failure:
      return std::make_exception_ptr(process_failure_error(a.message, a.process, a.devices));
    case reply_status::desync:
      return std::make_exception_ptr(desync_error(a.message));
    case reply_status::runtime_error:
      break;
  }
  return std::make_exception_ptr(runtime_error(a.message));
}

} // namespace am::detail::remote
