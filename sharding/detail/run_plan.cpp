#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/calls.hpp"
#include "actormesh/devices/runtime.hpp"
#include "devices/runtime_context.hpp"
#include "devices/transfers.hpp"
#include "sharding/detail/addressable.hpp"
#include "sharding/detail/array_state.hpp"
#include "sharding/detail/block_copy.hpp"
#include "actormesh/sharding/detail/trace.hpp"

#include <map>
#include <memory>
#include <sstream>
#include <tuple>

namespace am::detail {

namespace {
/// Values moved between processes in one plan run: (from an argument?, index, position, consumer
/// process) -> the received shard (empty on the sending side).
using cross_process_values = std::map<std::tuple<bool, int, int, int>, shard_future>;

/// The same number on both processes for one value of one plan (FNV-1a over the producing program's
/// name, the binding and the consumer), so that two processes issuing their transfers in different
/// orders get a desync error instead of silently exchanging equal-sized values.
std::uint32_t transfer_tag(const plan& p, const value_binding& b, int consumer) {
  std::uint32_t h = 2166136261u;
  auto mix = [&](std::uint32_t v) {
    for (int k = 0; k < 4; ++k) {
      h ^= (v >> (8 * k)) & 0xffu;
      h *= 16777619u;
    }
  };
  if (b.from == value_binding::source::call)
    for (char c : p.calls[static_cast<std::size_t>(b.index)].code->name)
      mix(static_cast<unsigned char>(c));
  mix(b.from == value_binding::source::argument ? 1u : 2u);
  mix(static_cast<std::uint32_t>(b.index));
  mix(static_cast<std::uint32_t>(b.position));
  mix(static_cast<std::uint32_t>(consumer));
  mix(static_cast<std::uint32_t>(p.calls.size()));
  return h;
}
} // namespace

std::vector<array> run_plan(const plan& p, const std::vector<array>& args) {
  // Each argument's shards are taken once: a concurrent delete_ cannot change them under us.
  std::vector<shard_list> arguments;
  arguments.reserve(args.size());
  for (auto& a : args)
    arguments.push_back(concrete_state(a).shards());
  auto resolve = [&](const value_binding& b, const std::vector<std::vector<shard_future>>& produced) {
    if (b.from == value_binding::source::argument)
      return (*arguments[static_cast<std::size_t>(b.index)])[static_cast<std::size_t>(b.position)].data;
    return produced[static_cast<std::size_t>(b.index)][static_cast<std::size_t>(b.position)];
  };
  // Where each value lives: an argument shard's device, or the device of the call producing it.
  auto device_of = [&](const value_binding& b) -> const device& {
    if (b.from == value_binding::source::argument)
      return (*arguments[static_cast<std::size_t>(b.index)])[static_cast<std::size_t>(b.position)].device;
    return p.calls[static_cast<std::size_t>(b.index)].dev;
  };
  // Multi-controller: every process runs the same plan and issues only its own devices' calls;
  // another process's outputs stand in here as futures that fail if waited on. A value one
  // process computes and another consumes is sent by the first and received by the second: both
  // walk the plan in the same order, so both issue the same transfers in the same order.
  // Single-controller: this process issues every call and every transfer. move_shard
  // (devices/transfers.hpp) does this process's part of each, whichever way the cluster runs.
  auto rt = current_context();
  std::unique_ptr<cross_process_values> moved;
  auto needs_transfer = [&](const value_binding& b, const device& consumer) {
    return device_of(b).process_index != consumer.process_index;
  };
  auto transfer = [&](const value_binding& b, const device& consumer, const value_type& type,
                      const std::vector<std::vector<shard_future>>& done) -> shard_future {
    if (!moved)
      moved = std::make_unique<cross_process_values>();
    auto& producer = device_of(b);
    auto key = std::make_tuple(b.from == value_binding::source::argument, b.index, b.position, consumer.process_index);
    auto [it, fresh] = moved->emplace(key, shard_future{});
    if (!fresh)
      return it->second;
    it->second = move_shard(*rt, producer, resolve(b, done), consumer, type, transfer_tag(p, b, consumer.process_index));
    return it->second;
  };
  std::vector<std::vector<shard_future>> produced(p.calls.size());
  for (std::size_t c = 0; c < p.calls.size(); ++c) {
    auto& call = p.calls[c];
    std::vector<value_type> types;
    std::vector<shard_future> inputs;
    inputs.reserve(call.inputs.size());
    for (std::size_t k = 0; k < call.inputs.size(); ++k) {
      auto& b = call.inputs[k];
      if (needs_transfer(b, call.dev)) {
        if (types.empty())
          types = call.code->input_types();
        inputs.push_back(transfer(b, call.dev, types[k], produced));
      } else if (is_addressable(call.dev)) {
        inputs.push_back(resolve(b, produced));
      }
    }
    if (!is_addressable(call.dev)) {
      produced[c].assign(call.code->outputs.size(), remote_shard(call.dev));
      continue;
    }
    produced[c] = execute(call.dev, call.code, std::move(inputs));
  }
  std::vector<array> outputs;
  outputs.reserve(p.outputs.size());
  for (auto& o : p.outputs) {
    auto s = std::make_shared<array_state>();
    s->shape = o.shape;
    s->type = o.type;
    s->layout = o.layout;
    std::vector<shard> shards;
    shards.reserve(o.shards.size());
    for (auto& sh : o.shards) {
      shard_future data;
      if (needs_transfer(sh.data, sh.dev))
        data = transfer(sh.data, sh.dev, {o.type, extents(sh.index)}, produced);
      else if (is_addressable(sh.dev))
        data = resolve(sh.data, produced);
      if (!is_addressable(sh.dev))
        data = remote_shard(sh.dev);
      shards.push_back({sh.dev, sh.index, sh.replica_id, std::move(data)});
    }
    s->set_shards(std::move(shards));
    outputs.emplace_back(std::move(s));
  }
  return outputs;
}

std::string to_string(const plan& p) {
  std::ostringstream out;
  out << p.calls.size() << " programs in " << p.stages << " stage(s)\n";
  for (auto& c : p.calls) {
    out << "stage " << c.stage << " on " << am::to_string(c.dev) << " <-";
    for (auto& b : c.inputs)
      out << (b.from == value_binding::source::argument ? " arg" : " call") << b.index << "." << b.position;
    out << '\n' << am::to_string(*c.code) << '\n';
  }
  return out.str();
}

std::string to_string(const graph& g) {
  std::ostringstream out;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    auto& n = g.nodes[i];
    out << '%' << i << " = kind" << static_cast<int>(n.kind) << ' ' << opcode_name(n.op) << ' '
        << aval_text(n.type, n.shape);
    for (auto o : n.operands)
      out << " %" << o;
    out << " " << (n.layout ? n.layout->to_string() : "?") << '\n';
  }
  return out.str();
}

} // namespace am::detail
