/// Tracing and dispatch: every array operation becomes a graph node. Inside jit the node is recorded
/// in the current trace; outside, a one-node graph is lowered (cached per signature) and run at once,
/// so eager operations and jit share one path.
#ifndef ACTORMESH_SHARDING_DETAIL_TRACE_HPP
#define ACTORMESH_SHARDING_DETAIL_TRACE_HPP

#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/detail/graph.hpp"
#include "actormesh/sharding/detail/plan.hpp"
#include "actormesh/sharding/host_array.hpp"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace am::detail {

/// A debug effect (am::debug_callback, am::debug_print) as a trace holds it: its body, run with
/// one device's shards of the values, and the values.
struct trace_effect {
  std::function<void(const std::vector<host_array>&)> body;
  std::vector<array> values;
};

/// Runs a debug effect on concrete values: one host task per device holding them, in this
/// thread's lane (sharding/debugging.cpp). Throws am::value_error when the values are not all on
/// the same devices.
void schedule_debug_effect(const trace_effect& effect);

/// The graph being recorded while a function is traced, with its tracer arguments and the concrete
/// arrays the function used (captured as extra arguments).
class trace_context {
public:
  /// Starts a trace with one input node (and tracer) per argument.
  explicit trace_context(const std::vector<array>& args);

  /// Ends the trace: its tracers can no longer be used.
  ~trace_context();

  trace_context(const trace_context&) = delete;
  trace_context& operator=(const trace_context&) = delete;

  /// The node of an operand: a tracer of this trace, or a concrete array (or a tracer of an
  /// enclosing trace, as grad/vmap/pmap's nested traces see their closures) captured as an input.
  int node_of(const array& a);

  /// Appends a node and returns a tracer for it.
  array record(node n);

  /// The graph recorded so far.
  graph& recorded() noexcept { return graph_; }

  /// The tracers standing for the arguments.
  const std::vector<array>& tracers() const noexcept { return tracers_; }

  /// Concrete arrays (and enclosing traces' tracers) used by the function, in the order of their
  /// extra input nodes.
  const std::vector<array>& captured() const noexcept { return captured_; }

  /// Lets debug effects be recorded here: a jit trace, whose plan runs them on every call (the
  /// traces pmap, vmap and grad make of a body replay their graphs and would lose them).
  void accept_effects() noexcept { accepts_effects_ = true; }

  /// Whether debug effects may be recorded here.
  bool accepts_effects() const noexcept { return accepts_effects_; }

  /// Records a debug effect whose values are tracers of this trace or concrete arrays.
  void add_effect(trace_effect e) { effects_.push_back(std::move(e)); }

  /// The debug effects recorded, in program order.
  const std::vector<trace_effect>& effects() const noexcept { return effects_; }

private:
  graph graph_;
  std::vector<trace_effect> effects_;
  bool accepts_effects_ = false;
  std::vector<array> tracers_;
  std::vector<array> captured_;
  std::map<const array_state*, int> captured_nodes_;
  trace_context* outer_;
};

/// The innermost trace active on this thread, or null.
trace_context* current_trace() noexcept;

/// Applies one operation: `n` describes the result (shape, dtype, sharding, parameters) and its
/// operands are `operands` (n.operands is filled here). Traced when a trace is active, else run now.
array apply(node n, const std::vector<array>& operands);

/// Runs a plan on concrete arguments and returns the output arrays (at once: shards are futures).
std::vector<array> run_plan(const plan& p, const std::vector<array>& args);

/// A concrete argument's state, checked: throws for stray tracers and (unless `allow_deleted`, as
/// delete_ needs) for deleted arrays.
const array_state& concrete_state(const array& a, bool allow_deleted = false);

/// Plans now in the cache of eager operations (bounded; for tests).
std::size_t eager_plan_count();

/// A jitted function's plans, one per input signature (bounded: past a few thousand signatures the
/// cache starts again).
class plan_cache {
public:
  /// `name` prefixes the programs' names.
  explicit plan_cache(std::string name) : name_(std::move(name)) {}

  /// Traces `fn` on a miss (with tracers for `inputs`), then runs the plan on `inputs`.
  std::vector<array> call(const std::vector<array>& inputs,
                          const std::function<std::vector<array>(const std::vector<array>&)>& fn);

  /// The listing of the plan for `inputs`' signature (tracing on a miss).
  std::string lowered_text(const std::vector<array>& inputs,
                           const std::function<std::vector<array>(const std::vector<array>&)>& fn);

  /// Number of cached plans.
  std::size_t size() const;

private:
  struct entry {
    plan lowered;
    std::vector<array> captured;
    std::vector<sharding_ptr> keep_alive;
    std::size_t outputs = 0; ///< the function's outputs; the debug effects' values follow them
    /// Per debug effect, its body and how many of the plan's extra outputs are its values.
    std::vector<std::pair<std::function<void(const std::vector<host_array>&)>, std::size_t>> effects;
  };

  std::shared_ptr<const entry> lookup(const std::vector<array>& inputs,
                      const std::function<std::vector<array>(const std::vector<array>&)>& fn);

  std::string name_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const entry>> plans_;
};

/// The signature key of arrays: shapes, dtypes and sharding identities.
std::string signature_key(const std::vector<array>& arrays);

} // namespace am::detail

#endif // ACTORMESH_SHARDING_DETAIL_TRACE_HPP
