#include "cluster/membership.hpp"

#include "actormesh/actors/wire_codec.hpp"
#include "actormesh/actors/errors.hpp"

namespace am::detail {

namespace {

void write_device(wire_writer& w, const device& d) {
  w.i32(d.id);
  w.i32(d.process_index);
  w.u8(static_cast<std::uint8_t>(d.platform));
  w.i32(d.local_ordinal);
}

device read_device(wire_reader& r) {
  device d;
  d.id = r.i32_in(0, max_cluster_processes * max_process_devices, "device id");
  d.process_index = r.i32_in(0, max_cluster_processes - 1, "process index");
  auto p = r.u8();
  if (p > static_cast<std::uint8_t>(platform::cuda))
    throw value_error("malformed cluster message: unknown platform code " + std::to_string(p));
  d.platform = static_cast<platform>(p);
  d.local_ordinal = r.i32_in(0, max_process_devices - 1, "local ordinal");
  return d;
}

member_role read_role(wire_reader& r) {
  auto v = r.u8();
  if (v > static_cast<std::uint8_t>(member_role::worker))
    throw value_error("malformed cluster message: unknown role code " + std::to_string(v));
  return static_cast<member_role>(v);
}

std::size_t read_count(wire_reader& r, std::size_t limit, const char* what) {
  auto n = r.u64();
  if (n > limit)
    throw value_error("malformed cluster message: " + std::to_string(n) + " " + what
                      + " exceed the limit of " + std::to_string(limit));
  return static_cast<std::size_t>(n);
}

} // namespace

const char* role_name(member_role r) noexcept {
  switch (r) {
    case member_role::controller:
      return "controller";
    case member_role::worker:
      return "worker";
    case member_role::peer:
      break;
  }
  return "peer";
}

std::string encode(const join_request& r) {
  wire_writer w;
  w.u32(r.protocol);
  w.str(r.version);
  w.i32(r.process);
  w.i32(r.process_count);
  w.str(r.host);
  w.u64(r.devices.size());
  for (auto& d : r.devices)
    write_device(w, d);
  w.u8(static_cast<std::uint8_t>(r.role));
  return w.take();
}

join_request decode_join_request(const std::string& bytes) {
  wire_reader r(bytes);
  join_request out;
  out.protocol = r.u32();
  out.version = r.str(256);
  if (out.protocol != wire_protocol_version)
    return out; // the caller refuses it, naming both versions; the rest may be another format
  out.process_count = 0;
  out.process = r.i32_in(0, max_cluster_processes - 1, "process index");
  out.process_count = r.i32_in(1, max_cluster_processes, "process count");
  out.host = r.str(256);
  auto n = read_count(r, max_process_devices, "devices");
  for (std::size_t k = 0; k < n; ++k)
    out.devices.push_back(read_device(r));
  out.role = read_role(r);
  r.finish();
  return out;
}

std::vector<int> cluster_directory::device_ids_of(int p) const {
  std::vector<int> ids;
  for (auto& d : devices)
    if (d.process_index == p)
      ids.push_back(d.id);
  return ids;
}

std::string encode(const cluster_directory& d) {
  wire_writer w;
  w.u64(d.devices.size());
  for (auto& dev : d.devices)
    write_device(w, dev);
  w.u64(d.hosts.size());
  for (auto& h : d.hosts)
    w.str(h);
  for (std::size_t p = 0; p < d.hosts.size(); ++p)
    w.u8(static_cast<std::uint8_t>(p < d.roles.size() ? d.roles[p] : member_role::peer));
  return w.take();
}

cluster_directory decode_directory(const std::string& bytes) {
  wire_reader r(bytes);
  cluster_directory out;
  auto n = read_count(r, static_cast<std::size_t>(max_cluster_processes) * max_process_devices, "devices");
  for (std::size_t k = 0; k < n; ++k) {
    out.devices.push_back(read_device(r));
    if (out.devices.back().id != static_cast<int>(k))
      throw value_error("malformed cluster message: device " + std::to_string(k) + " has id "
                        + std::to_string(out.devices.back().id));
  }
  auto hosts = read_count(r, max_cluster_processes, "hosts");
  for (std::size_t k = 0; k < hosts; ++k)
    out.hosts.push_back(r.str(256));
  for (std::size_t k = 0; k < hosts; ++k)
    out.roles.push_back(read_role(r));
  for (auto& dev : out.devices)
    if (dev.process_index >= static_cast<int>(out.hosts.size()))
      throw value_error("malformed cluster message: device " + std::to_string(dev.id)
                        + " names process " + std::to_string(dev.process_index) + " of "
                        + std::to_string(out.hosts.size()));
  r.finish();
  return out;
}

std::string join_list(const std::vector<int>& values) {
  std::string out;
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (k > 0)
      out += k + 1 == values.size() ? " and " : ", ";
    out += std::to_string(values[k]);
  }
  return out;
}

std::string describe_process(const cluster_directory& d, int p) {
  std::string out = "process " + std::to_string(p);
  if (p >= 0 && p < static_cast<int>(d.hosts.size())) {
    out += " (host " + d.hosts[static_cast<std::size_t>(p)];
    auto ids = d.device_ids_of(p);
    if (!ids.empty())
      out += ids.size() == 1 ? ", device " + std::to_string(ids.front())
                             : ", devices " + std::to_string(ids.front()) + "-" + std::to_string(ids.back());
    out += ")";
  }
  return out;
}

} // namespace am::detail
