#include "actors/errors.hpp"
#include "devices/calls.hpp"
#include "sharding/detail/array_state.hpp"
#include "sharding/detail/trace.hpp"

#include <sstream>

namespace am::detail {

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
  std::vector<std::vector<shard_future>> produced(p.calls.size());
  for (std::size_t c = 0; c < p.calls.size(); ++c) {
    auto& call = p.calls[c];
    std::vector<shard_future> inputs;
    inputs.reserve(call.inputs.size());
    for (auto& b : call.inputs)
      inputs.push_back(resolve(b, produced));
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
    for (auto& sh : o.shards)
      shards.push_back({sh.dev, sh.index, sh.replica_id, resolve(sh.data, produced)});
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
