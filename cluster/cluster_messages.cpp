#include "cluster/cluster_messages.hpp"

#include "cluster/membership.hpp"
#include "actormesh/actors/wire_codec.hpp"
#include "actormesh/actors/errors.hpp"

namespace am::detail {

std::string encode(const cluster_reply& r) {
  wire_writer w;
  w.u8(static_cast<std::uint8_t>(r.code));
  w.i32(r.process);
  w.str(r.message);
  w.str(r.value);
  return w.take();
}

cluster_reply decode_reply(const std::string& bytes) {
  wire_reader r(bytes);
  cluster_reply out;
  auto code = r.u8();
  if (code > static_cast<std::uint8_t>(reply_code::invalid))
    throw value_error("malformed cluster message: unknown reply code " + std::to_string(code));
  out.code = static_cast<reply_code>(code);
  out.process = r.i32_in(-1, max_cluster_processes - 1, "process index");
  out.message = r.str();
  out.value = r.str();
  r.finish();
  return out;
}

std::string encode(const std::vector<declared_failure>& failures) {
  wire_writer w;
  w.u32(static_cast<std::uint32_t>(failures.size()));
  for (auto& f : failures) {
    w.i32(f.process);
    w.str(f.notice);
  }
  return w.take();
}

std::vector<declared_failure> decode_failures(const std::string& bytes) {
  wire_reader r(bytes);
  const std::uint32_t count = r.u32();
  if (count == 0 || count > static_cast<std::uint32_t>(max_cluster_processes))
    throw value_error("malformed cluster message: " + std::to_string(count) + " failures in one notice");
  std::vector<declared_failure> out;
  out.reserve(count);
  for (std::uint32_t k = 0; k < count; ++k) {
    declared_failure f;
    f.process = r.i32_in(0, max_cluster_processes - 1, "failed process");
    f.notice = r.str(4096);
    out.push_back(std::move(f));
  }
  r.finish();
  return out;
}

std::string encode(const collective_check& c) {
  wire_writer w;
  w.str(c.communicator);
  w.u64(c.step);
  w.i32_list(c.participants);
  w.str(c.signature);
  w.u64(static_cast<std::uint64_t>(c.timeout_ms));
  return w.take();
}

collective_check decode_collective_check(const std::string& bytes) {
  wire_reader r(bytes);
  collective_check out;
  out.communicator = r.str(4096);
  out.step = r.u64();
  out.participants = r.i32_list(max_cluster_processes);
  out.signature = r.str(4096);
  out.timeout_ms = static_cast<std::int64_t>(r.u64());
  r.finish();
  if (out.timeout_ms < 0)
    throw value_error("malformed cluster message: negative timeout");
  for (int p : out.participants)
    if (p < 0 || p >= max_cluster_processes)
      throw value_error("malformed cluster message: participant " + std::to_string(p) + " out of range");
  return out;
}

} // namespace am::detail
