#include "sharding/detail/sharding_codec.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/runtime_context.hpp"
#include "actormesh/sharding/named_sharding.hpp"
#include "actormesh/sharding/positional_sharding.hpp"
#include "actormesh/sharding/single_device_sharding.hpp"

#include <map>

namespace am::detail {

namespace {

enum class sharding_kind : std::uint8_t { single = 1, positional, named };

constexpr std::size_t max_devices = 1u << 16;
constexpr std::size_t max_rank = 64;
constexpr std::size_t max_name = 256;

void write_devices(wire_writer& w, const std::vector<device>& devices) {
  std::vector<int> ids;
  ids.reserve(devices.size());
  for (auto& d : devices)
    ids.push_back(d.id);
  w.i32_list(ids);
}

void write_shape(wire_writer& w, const std::vector<std::int64_t>& shape) {
  w.u64(shape.size());
  for (auto n : shape)
    w.u64(static_cast<std::uint64_t>(n));
}

std::vector<std::int64_t> read_shape(wire_reader& r) {
  auto n = r.u64();
  if (n > max_rank)
    throw value_error("malformed sharding: " + std::to_string(n) + " dimensions");
  std::vector<std::int64_t> shape;
  std::int64_t size = 1;
  for (std::uint64_t k = 0; k < n; ++k) {
    auto v = static_cast<std::int64_t>(r.u64());
    if (v < 0 || v > static_cast<std::int64_t>(max_devices))
      throw value_error("malformed sharding: a device grid dimension of " + std::to_string(v));
    size *= v; // both at most 2^16 here, and size is kept at most 2^16 below: no overflow
    if (size > static_cast<std::int64_t>(max_devices))
      throw value_error("malformed sharding: a device grid of more than " + std::to_string(max_devices) + " devices");
    shape.push_back(v);
  }
  return shape;
}

std::vector<device> read_devices(wire_reader& r) {
  return devices_by_id(r.i32_list(max_devices), "malformed sharding");
}

void write_names(wire_writer& w, const std::vector<std::string>& names) {
  w.u64(names.size());
  for (auto& n : names)
    w.str(n);
}

std::vector<std::string> read_names(wire_reader& r) {
  auto n = r.u64();
  if (n > max_rank)
    throw value_error("malformed sharding: " + std::to_string(n) + " axis names");
  std::vector<std::string> names;
  for (std::uint64_t k = 0; k < n; ++k)
    names.push_back(r.str(max_name));
  return names;
}

} // namespace

std::vector<device> devices_by_id(const std::vector<int>& ids, const std::string& what) {
  std::map<int, device> known;
  for (auto& d : current_context()->all_devices())
    known.emplace(d.id, d);
  std::vector<device> out;
  out.reserve(ids.size());
  for (int id : ids) {
    auto it = known.find(id);
    if (it == known.end())
      throw value_error(what + ": no device with id " + std::to_string(id) + " in this cluster");
    out.push_back(it->second);
  }
  return out;
}

void write_sharding(wire_writer& w, const sharding& s) {
  if (auto* single = dynamic_cast<const single_device_sharding*>(&s)) {
    w.u8(static_cast<std::uint8_t>(sharding_kind::single));
    w.i32(single->device().id);
  } else if (auto* positional = dynamic_cast<const positional_sharding*>(&s)) {
    w.u8(static_cast<std::uint8_t>(sharding_kind::positional));
    write_shape(w, positional->shape());
    write_devices(w, positional->device_assignment());
  } else if (auto* named = dynamic_cast<const named_sharding*>(&s)) {
    w.u8(static_cast<std::uint8_t>(sharding_kind::named));
    write_shape(w, named->mesh().axis_sizes());
    write_devices(w, named->mesh().flat_devices());
    write_names(w, named->mesh().axis_names());
    w.u64(named->spec().size());
    for (auto& entry : named->spec())
      write_names(w, entry.axes());
  } else {
    throw value_error("this sharding cannot travel to another process: " + s.to_string());
  }
}

sharding_ptr read_sharding(wire_reader& r) {
  auto kind = r.u8();
  switch (static_cast<sharding_kind>(kind)) {
    case sharding_kind::single:
      return make_single_device_sharding(devices_by_id({r.i32()}, "malformed sharding").front());
    case sharding_kind::positional: {
      auto shape = read_shape(r);
      auto devices = read_devices(r);
      return std::make_shared<const positional_sharding>(device_grid(std::move(shape), std::move(devices)));
    }
    case sharding_kind::named: {
      auto shape = read_shape(r);
      auto devices = read_devices(r);
      auto names = read_names(r);
      auto n = r.u64();
      if (n > max_rank)
        throw value_error("malformed sharding: a spec of " + std::to_string(n) + " entries");
      std::vector<spec_entry> entries;
      for (std::uint64_t k = 0; k < n; ++k)
        entries.emplace_back(read_names(r));
      return make_named_sharding(mesh(device_grid(std::move(shape), std::move(devices)), std::move(names)),
                                 partition_spec(std::move(entries)));
    }
  }
  throw value_error("malformed sharding: unknown kind " + std::to_string(kind));
}

} // namespace am::detail
