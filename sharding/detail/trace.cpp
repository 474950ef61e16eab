#include "actormesh/sharding/detail/trace.hpp"

#include "actormesh/actors/errors.hpp"
#include "sharding/detail/array_state.hpp"
#include "sharding/detail/lowering.hpp"

#include <cstring>

namespace am::detail {

namespace {

thread_local trace_context* innermost = nullptr;

void append_raw(std::string& key, const void* p, std::size_t n) {
  key.append(static_cast<const char*>(p), n);
}

template <class T>
void append(std::string& key, const T& v) {
  append_raw(key, &v, sizeof v);
}

void append_vector(std::string& key, const std::vector<std::int64_t>& v) {
  append(key, v.size());
  append_raw(key, v.data(), v.size() * sizeof(std::int64_t));
}

void append_array(std::string& key, const array_state& s) {
  append_vector(key, s.shape);
  append(key, s.type);
  append(key, s.layout.get());
  append(key, s.lazy_constant.has_value());
  if (s.lazy_constant)
    append(key, *s.lazy_constant);
}

/// The key of an eager operation: what the node computes and its operands' signatures.
std::string eager_key(const node& n, const std::vector<const array_state*>& operands) {
  std::string key;
  key.reserve(128);
  append(key, n.kind);
  append(key, n.op);
  append_vector(key, n.shape);
  append(key, n.type);
  append(key, n.layout.get());
  append_vector(key, n.attrs);
  append(key, n.scalar);
  append(key, n.key);
  for (auto* s : operands)
    append_array(key, *s);
  return key;
}

/// Most plans an eager cache or a jitted function's cache holds; past it the cache starts again.
/// A plan holds the shardings of its operation, so this also bounds the shardings they keep alive.
constexpr std::size_t plan_bound = 4096;

/// Most per-device calls the eager cache's plans hold together: a plan over 64 devices weighs 64
/// times one over a device, so a count of plans alone bounds memory only for few devices.
constexpr std::size_t eager_call_bound = 1u << 16;

/// Plans of eager operations, shared by all threads. Cleared when it grows past plan_bound plans
/// or eager_call_bound calls.
struct eager_cache {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const plan>> plans;
  std::vector<sharding_ptr> keep_alive;
  std::size_t calls = 0; ///< the plans' calls, together
};

eager_cache& eager_plans() {
  static eager_cache cache;
  return cache;
}

node constant_node(const array_state& s) {
  node n;
  n.kind = node_kind::constant;
  n.shape = s.shape;
  n.type = s.type;
  n.layout = s.layout;
  n.scalar = *s.lazy_constant;
  return n;
}

node input_node(const array_state& s, int arg) {
  node in;
  in.kind = node_kind::input;
  in.shape = s.shape;
  in.type = s.type;
  in.layout = s.layout;
  in.attrs = {arg};
  return in;
}

} // namespace

trace_context::trace_context(const std::vector<array>& args) : outer_(innermost) {
  for (std::size_t k = 0; k < args.size(); ++k) {
    auto& s = concrete_state(args[k]);
    int id = graph_.add(input_node(s, static_cast<int>(k)));
    graph_.inputs.push_back(id);
    auto t = std::make_shared<array_state>();
    t->shape = s.shape;
    t->type = s.type;
    t->layout = s.layout;
    t->trace = this;
    t->node = id;
    tracers_.emplace_back(std::move(t));
  }
  innermost = this;
}

trace_context::~trace_context() {
  innermost = outer_;
  for (auto& t : tracers_)
    t.state()->trace = nullptr;
}

int trace_context::node_of(const array& a) {
  auto* s = a.state().get();
  if (s == nullptr)
    throw value_error("Use of an empty am::array");
  if (s->trace == this)
    return s->node;
  if (s->lazy_constant)
    return graph_.add(constant_node(*s));
  bool enclosing = false; // a tracer of an enclosing trace is captured like a concrete array
  for (auto* t = outer_; t != nullptr && !enclosing; t = t->outer_)
    enclosing = s->trace == t;
  if (s->node >= 0 && !enclosing)
    throw value_error("Encountered an unexpected tracer: a value from another (or a finished) jit trace "
                      "was used here");
  auto it = captured_nodes_.find(s);
  if (it != captured_nodes_.end())
    return it->second;
  if (!enclosing)
    concrete_state(a);
  int arg = static_cast<int>(graph_.inputs.size());
  int id = graph_.add(input_node(*s, arg));
  graph_.inputs.push_back(id);
  captured_.push_back(a);
  captured_nodes_.emplace(s, id);
  return id;
}

array trace_context::record(node n) {
  auto t = std::make_shared<array_state>();
  t->shape = n.shape;
  t->type = n.type;
  t->layout = n.layout;
  t->trace = this;
  t->node = graph_.add(std::move(n));
  return array(std::move(t));
}

trace_context* current_trace() noexcept {
  return innermost;
}

const array_state& concrete_state(const array& a, bool allow_deleted) {
  auto* s = a.state().get();
  if (s == nullptr)
    throw value_error("Use of an empty am::array");
  if (s->node >= 0)
    throw value_error("Encountered an unexpected tracer: a traced value escaped its jit function");
  if (s->lazy_constant)
    throw runtime_error("internal: a scalar operand was used outside the operation it belongs to");
  if (!allow_deleted && s->deleted())
    throw_deleted(*s);
  return *s;
}

array apply(node n, const std::vector<array>& operands) {
  if (auto* t = current_trace()) {
    n.operands.clear();
    for (auto& a : operands)
      n.operands.push_back(t->node_of(a));
    return t->record(std::move(n));
  }
  // Array operands become inputs; scalar operands fold into the program as constants.
  std::vector<const array_state*> states;
  std::vector<array> inputs;
  for (auto& a : operands) {
    auto* s = a.state().get();
    if (s != nullptr && s->lazy_constant) {
      states.push_back(s);
      continue;
    }
    states.push_back(&concrete_state(a));
    inputs.push_back(a);
  }
  auto key = eager_key(n, states);
  auto& cache = eager_plans();
  std::shared_ptr<const plan> p;
  {
    std::lock_guard<std::mutex> guard(cache.mutex);
    auto it = cache.plans.find(key);
    if (it != cache.plans.end())
      p = it->second;
  }
  if (!p) {
    graph g;
    int arg = 0;
    for (auto* s : states) {
      int id = s->lazy_constant ? g.add(constant_node(*s)) : g.add(input_node(*s, arg++));
      if (!s->lazy_constant)
        g.inputs.push_back(id);
      n.operands.push_back(id);
    }
    auto layout = n.layout;
    g.outputs.push_back(g.add(std::move(n)));
    p = std::make_shared<const plan>(lower(g, "eager"));
    std::lock_guard<std::mutex> guard(cache.mutex);
    if (cache.plans.size() >= plan_bound || cache.calls + p->calls.size() > eager_call_bound) {
      cache.plans.clear();
      cache.keep_alive.clear();
      cache.calls = 0;
    }
    if (cache.plans.emplace(key, p).second)
      cache.calls += p->calls.size();
    // Keys hold sharding addresses: keep those shardings alive while their plans are cached.
    cache.keep_alive.push_back(layout);
    for (auto* s : states)
      cache.keep_alive.push_back(s->layout);
  }
  return run_plan(*p, inputs).at(0);
}

std::size_t eager_plan_count() {
  auto& cache = eager_plans();
  std::lock_guard<std::mutex> guard(cache.mutex);
  return cache.plans.size();
}

std::string signature_key(const std::vector<array>& arrays) {
  std::string key;
  for (auto& a : arrays)
    append_array(key, concrete_state(a));
  return key;
}

std::shared_ptr<const plan_cache::entry> plan_cache::lookup(
  const std::vector<array>& inputs, const std::function<std::vector<array>(const std::vector<array>&)>& fn) {
  auto key = signature_key(inputs);
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = plans_.find(key);
    if (it != plans_.end())
      return it->second;
  }
  auto e = std::make_shared<entry>();
  {
    trace_context trace(inputs);
    trace.accept_effects();
    auto outputs = fn(trace.tracers());
    auto& g = trace.recorded();
    for (auto& o : outputs)
      g.outputs.push_back(trace.node_of(o));
    if (g.outputs.empty())
      throw value_error("A jitted function must return at least one array");
    e->outputs = g.outputs.size();
    // A debug effect's values become extra outputs, so that every call has them to show.
    for (auto& effect : trace.effects()) {
      for (auto& v : effect.values)
        g.outputs.push_back(trace.node_of(v));
      e->effects.emplace_back(effect.body, effect.values.size());
    }
    e->lowered = lower(g, name_);
    e->captured = trace.captured();
    for (auto& nd : g.nodes)
      e->keep_alive.push_back(nd.layout);
  }
  std::lock_guard<std::mutex> guard(mutex_);
  if (plans_.size() >= plan_bound)
    plans_.clear(); // a function called with ever new shardings: keep the memory bounded
  return plans_.emplace(key, std::move(e)).first->second;
}

std::vector<array> plan_cache::call(const std::vector<array>& inputs,
                                    const std::function<std::vector<array>(const std::vector<array>&)>& fn) {
  if (current_trace() != nullptr) {
    // jit inside a traced function: inline it into the outer trace.
    return fn(inputs);
  }
  auto e = lookup(inputs, fn);
  std::vector<array> results;
  if (e->captured.empty()) {
    results = run_plan(e->lowered, inputs);
  } else {
    auto args = inputs;
    args.insert(args.end(), e->captured.begin(), e->captured.end());
    results = run_plan(e->lowered, args);
  }
  if (e->effects.empty())
    return results;
  // The debug effects' values, in the order they were recorded, after the function's outputs.
  std::size_t next = e->outputs;
  for (auto& [body, count] : e->effects) {
    trace_effect effect{body, std::vector<array>(results.begin() + static_cast<std::ptrdiff_t>(next),
                                                 results.begin() + static_cast<std::ptrdiff_t>(next + count))};
    next += count;
    schedule_debug_effect(effect);
  }
  results.resize(e->outputs);
  return results;
}

std::string plan_cache::lowered_text(const std::vector<array>& inputs,
                                     const std::function<std::vector<array>(const std::vector<array>&)>& fn) {
  return to_string(lookup(inputs, fn)->lowered);
}

std::size_t plan_cache::size() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return plans_.size();
}

} // namespace am::detail
