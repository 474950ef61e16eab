#include "devices/cpu/cpu_compiler.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/cpu/cpu_sources.hpp"

#include <algorithm>
#include <map>
#include <sstream>

namespace am::detail {

namespace {

enum class role : std::uint8_t { dead, parameter, alias, fused, stage };

bool is_gather(opcode op) {
  return op == opcode::broadcast_in_dim || op == opcode::slice || op == opcode::transpose;
}

bool is_source(opcode op) {
  return op == opcode::constant || op == opcode::iota || op == opcode::random_uniform
         || op == opcode::random_normal;
}

/// Builds the stages of one program.
class compiler {
public:
  compiler(const program& p, const compile_options& opt, compiled_program& out)
    : p_(p), opt_(opt), out_(out), n_(p.code.size()) {}

  void run() {
    classify();
    form_regions();
    for (auto o : p_.outputs)
      materialized_[static_cast<std::size_t>(root(o))] = true;
    for (std::size_t r = 0; r < members_.size(); ++r)
      build_region(static_cast<std::int32_t>(r));
    plan_releases();
  }

private:
  std::int32_t root(std::int32_t v) const { return out_.root[static_cast<std::size_t>(v)]; }
  const instruction& ins(std::int32_t v) const { return p_.code[static_cast<std::size_t>(v)]; }

  /// Liveness, aliases and the role of every instruction.
  void classify() {
    std::vector<bool> live(n_, false);
    for (auto o : p_.outputs)
      live[static_cast<std::size_t>(o)] = true;
    for (auto i = n_; i-- > 0;)
      if (live[i])
        for (auto o : p_.code[i].operands)
          live[static_cast<std::size_t>(o)] = true;
    out_.root.resize(n_);
    roles_.assign(n_, role::dead);
    region_of_.assign(n_, -1);
    materialized_.assign(n_, false);
    for (std::size_t i = 0; i < n_; ++i) {
      auto& x = p_.code[i];
      out_.root[i] = static_cast<std::int32_t>(i);
      bool same_count = !x.operands.empty()
                        && element_count(ins(x.operands[0]).type.shape) == element_count(x.type.shape);
      bool alias = x.op == opcode::reshape || (x.op == opcode::broadcast_in_dim && same_count)
                   || (x.op == opcode::convert && ins(x.operands[0]).type.dtype == x.type.dtype);
      if (alias)
        out_.root[i] = root(x.operands[0]);
      if (!live[i])
        continue;
      if (x.op == opcode::parameter)
        roles_[i] = role::parameter;
      else if (alias)
        roles_[i] = role::alias;
      else if (is_elementwise(x.op) || is_source(x.op) || is_gather(x.op))
        roles_[i] = role::fused;
      else
        roles_[i] = role::stage;
    }
  }

  /// Marks `v` (a root) as read by a later stage or region: it needs a buffer, and its region, if
  /// still open, must run now.
  void use_externally(std::int32_t v) {
    materialized_[static_cast<std::size_t>(v)] = true;
    auto r = region_of_[static_cast<std::size_t>(v)];
    if (r >= 0)
      close(r);
  }

  void close(std::int32_t r) {
    for (auto it = open_.begin(); it != open_.end(); ++it) {
      if (it->second == r) {
        open_.erase(it);
        out_.stages.push_back({cpu_stage::kind::fused, r, -1, {}});
        return;
      }
    }
  }

  /// Assigns every fused instruction to a region and orders regions and stages. A region stays open
  /// (it may still grow) until something outside it reads one of its values; an open region has no
  /// readers, so it can run after every stage created meanwhile.
  void form_regions() {
    for (std::size_t i = 0; i < n_; ++i) {
      auto& x = p_.code[i];
      if (roles_[i] == role::fused) {
        auto count = element_count(x.type.shape);
        auto it = opt_.fuse ? open_.find(count) : open_.end();
        std::int32_t r = it == open_.end() ? -1 : it->second;
        for (auto o : x.operands) {
          auto v = root(o);
          bool internal = !is_gather(x.op) && r >= 0 && region_of_[static_cast<std::size_t>(v)] == r;
          if (internal)
            continue;
          if (r >= 0 && region_of_[static_cast<std::size_t>(v)] == r)
            r = -1; // a gather of this region's own value: the region must run first
          use_externally(v);
        }
        if (r < 0) {
          r = static_cast<std::int32_t>(members_.size());
          members_.emplace_back();
          open_[count] = r;
        }
        members_[static_cast<std::size_t>(r)].push_back(static_cast<std::int32_t>(i));
        region_of_[i] = r;
        if (!opt_.fuse)
          close(r);
      } else if (roles_[i] == role::stage) {
        for (auto o : x.operands)
          use_externally(root(o));
        auto what = x.op == opcode::concatenate ? cpu_stage::kind::concatenate
                    : x.op == opcode::dot       ? cpu_stage::kind::dot
                                                : cpu_stage::kind::reduce;
        out_.stages.push_back({what, -1, static_cast<std::int32_t>(i), {}});
      }
    }
    while (!open_.empty())
      close(open_.begin()->second);
  }

  tile_kernel kernel_of(const instruction& x, std::shared_ptr<const void>& params) const {
    auto& k = kernels(opt_.isa);
    auto dt = x.type.dtype;
    auto operand_shape = [&] { return ins(x.operands[0]).type.shape; };
    switch (x.op) {
      case opcode::constant:
        params = std::make_shared<constant_params>(make_constant(x.scalar, dt));
        return constant_kernel(dt);
      case opcode::iota: return iota_kernel(dt);
      case opcode::random_uniform:
      case opcode::random_normal:
        params = std::make_shared<random_params>(make_random(x.attrs, x.type.shape));
        if (auto random = k.random[random_slot(x.op)][static_cast<int>(dt)])
          return random;
        throw value_error("no " + std::string(opcode_name(x.op)) + " values of dtype " + std::string(name(dt)));
      case opcode::broadcast_in_dim:
        params = std::make_shared<gather_params>(broadcast_gather(operand_shape(), x.type.shape, x.attrs));
        return gather_kernel(dt);
      case opcode::slice:
        params = std::make_shared<gather_params>(slice_gather(operand_shape(), x.attrs));
        return gather_kernel(dt);
      case opcode::transpose:
        params = std::make_shared<gather_params>(transpose_gather(operand_shape(), x.attrs));
        return gather_kernel(dt);
      case opcode::convert:
        return k.convert[static_cast<int>(ins(x.operands[0]).type.dtype)][static_cast<int>(dt)];
      default: {
        auto operand_dt = x.op == opcode::select ? dt : ins(x.operands[0]).type.dtype;
        return k.elementwise[static_cast<int>(x.op)][static_cast<int>(operand_dt)];
      }
    }
  }

  /// Slots, kernels and scratch rows of region `r`.
  void build_region(std::int32_t r) {
    auto& mem = members_[static_cast<std::size_t>(r)];
    fused_region region;
    region.elements = element_count(p_.code[static_cast<std::size_t>(mem.front())].type.shape);
    std::map<std::int32_t, std::int32_t> slot_of;   // internal member -> slot
    std::map<std::int32_t, std::int32_t> buffer_slot, base_slot; // external value -> slot
    std::map<std::int32_t, std::size_t> last_use;   // internal member -> last step reading it
    for (std::size_t k = 0; k < mem.size(); ++k)
      for (auto o : ins(mem[k]).operands)
        if (region_of_[static_cast<std::size_t>(root(o))] == r && !is_gather(ins(mem[k]).op))
          last_use[root(o)] = k;
    std::vector<std::int32_t> free_rows;
    std::map<std::int32_t, bool> invariant; // internal member -> its tile is the same everywhere
    auto new_slot = [&](region_slot s) {
      region.slots.push_back(s);
      return static_cast<std::int32_t>(region.slots.size() - 1);
    };
    auto elem_size = [&](std::int32_t v) { return static_cast<std::uint8_t>(size_of(ins(v).type.dtype)); };
    auto external = [&](std::int32_t v, bool base) {
      auto& table = base ? base_slot : buffer_slot;
      if (auto it = table.find(v); it != table.end())
        return it->second;
      auto kind = base ? region_slot::kind::base : region_slot::kind::buffer;
      return table[v] = new_slot({kind, v, elem_size(v)});
    };
    for (std::size_t k = 0; k < mem.size(); ++k) {
      auto i = mem[k];
      auto& x = ins(i);
      region_step step;
      step.instruction = i;
      for (std::size_t j = 0; j < x.operands.size(); ++j) {
        auto v = root(x.operands[j]);
        bool internal = !is_gather(x.op) && region_of_[static_cast<std::size_t>(v)] == r;
        step.src[j] = internal ? slot_of.at(v) : external(v, is_gather(x.op));
      }
      bool same_everywhere = x.op == opcode::constant || (is_elementwise(x.op) && !x.operands.empty());
      bool scalar_broadcast = x.op == opcode::broadcast_in_dim
                              && element_count(ins(x.operands[0]).type.shape) == 1;
      for (std::size_t j = 0; same_everywhere && j < x.operands.size(); ++j)
        same_everywhere = invariant[root(x.operands[j])] && region_of_[static_cast<std::size_t>(root(x.operands[j]))] == r;
      same_everywhere = (same_everywhere || scalar_broadcast) && !materialized_[static_cast<std::size_t>(i)];
      invariant[i] = same_everywhere;
      if (materialized_[static_cast<std::size_t>(i)]) {
        step.dst = external(i, false);
        region.outputs.push_back(i);
      } else {
        std::int32_t row;
        if (free_rows.empty() || same_everywhere) { // an invariant row is never shared
          row = region.scratch_rows++;
        } else {
          row = free_rows.back();
          free_rows.pop_back();
        }
        step.dst = new_slot({region_slot::kind::scratch, row, elem_size(i)});
      }
      slot_of[i] = step.dst;
      for (auto o : x.operands) {
        auto v = root(o);
        auto it = last_use.find(v);
        if (it != last_use.end() && it->second == k && !materialized_[static_cast<std::size_t>(v)]
            && !invariant[v]) {
          free_rows.push_back(region.slots[static_cast<std::size_t>(slot_of.at(v))].index);
          last_use.erase(it);
        }
      }
      step.kernel = kernel_of(x, step.params);
      if (step.kernel == nullptr)
        throw value_error("no CPU kernel for " + std::string(opcode_name(x.op)) + " on "
                          + std::string(name(x.type.dtype)));
      (same_everywhere ? region.prologue : region.steps).push_back(std::move(step));
    }
    out_.scratch_bytes = std::max(out_.scratch_bytes, static_cast<std::size_t>(region.scratch_rows)
                                                        * static_cast<std::size_t>(opt_.tile) * 8);
    out_.regions.push_back(std::move(region));
  }

  /// The values each stage reads.
  std::vector<std::int32_t> reads(const cpu_stage& s) const {
    std::vector<std::int32_t> v;
    if (s.what == cpu_stage::kind::fused) {
      auto& region = out_.regions[static_cast<std::size_t>(s.region)];
      for (auto& slot : region.slots)
        if (slot.where != region_slot::kind::scratch)
          v.push_back(slot.index);
    } else {
      for (auto o : ins(s.instruction).operands)
        v.push_back(root(o));
    }
    return v;
  }

  /// Releases every materialized value after the last stage that reads it, unless it is an output.
  void plan_releases() {
    std::vector<bool> is_output(n_, false);
    for (auto o : p_.outputs)
      is_output[static_cast<std::size_t>(root(o))] = true;
    std::vector<std::int32_t> last(n_, -1);
    for (std::size_t s = 0; s < out_.stages.size(); ++s)
      for (auto v : reads(out_.stages[s]))
        last[static_cast<std::size_t>(v)] = static_cast<std::int32_t>(s);
    for (std::size_t v = 0; v < n_; ++v) {
      if (is_output[v])
        continue;
      if (last[v] >= 0)
        out_.stages[static_cast<std::size_t>(last[v])].release.push_back(static_cast<std::int32_t>(v));
      else if (p_.code[v].op == opcode::parameter)
        out_.inputs_released.push_back(static_cast<std::int32_t>(v));
    }
  }

  const program& p_;
  const compile_options& opt_;
  compiled_program& out_;
  std::size_t n_;
  std::vector<role> roles_;
  std::vector<std::int32_t> region_of_;
  std::vector<bool> materialized_;
  std::vector<std::vector<std::int32_t>> members_;
  std::map<std::int64_t, std::int32_t> open_; ///< open regions by element count
};

} // namespace

std::shared_ptr<const compiled_program> compile_for_cpu(const program& p, const compile_options& options) {
  if (!isa_supported(options.isa))
    throw value_error("this CPU cannot run " + std::string(isa_name(options.isa)) + " kernels");
  if (options.tile < 64)
    throw value_error("CPU tiles must hold at least 64 elements");
  validate(p);
  auto out = std::make_shared<compiled_program>();
  out->tile = options.tile;
  out->isa = options.isa;
  compiler(p, options, *out).run();
  return out;
}

std::string to_string(const compiled_program& c, const program& p) {
  std::ostringstream s;
  s << "cpu program " << p.name << " (" << isa_name(c.isa) << ", tile " << c.tile << ")\n";
  for (std::size_t k = 0; k < c.stages.size(); ++k) {
    auto& st = c.stages[k];
    s << "  stage " << k << ": ";
    if (st.what == cpu_stage::kind::fused) {
      auto& r = c.regions[static_cast<std::size_t>(st.region)];
      s << "fused x" << r.elements << " {";
      auto list = [&](const std::vector<region_step>& steps) {
        for (std::size_t j = 0; j < steps.size(); ++j)
          s << (j ? ", %" : "%") << steps[j].instruction << ' '
            << opcode_name(p.code[static_cast<std::size_t>(steps[j].instruction)].op);
      };
      if (!r.prologue.empty()) {
        s << "once: ";
        list(r.prologue);
        s << "; per tile: ";
      }
      list(r.steps);
      s << "} scratch rows " << r.scratch_rows << ", writes";
      for (auto v : r.outputs)
        s << " %" << v;
    } else {
      s << opcode_name(p.code[static_cast<std::size_t>(st.instruction)].op) << " %" << st.instruction;
    }
    s << '\n';
  }
  return s.str();
}

} // namespace am::detail
