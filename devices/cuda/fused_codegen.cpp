#include "devices/cuda/fused_codegen.hpp"

#include "actormesh/actors/errors.hpp"
#include "devices/cuda/embedded_sources.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace am::detail::cuda {

namespace {

/// `prefix` followed by `k` (built without `"literal" + std::string`, which trips g++ 12's
/// -Wrestrict false positive).
std::string named(const char* prefix, std::int64_t k) {
  std::string s(prefix);
  s += std::to_string(k);
  return s;
}

std::string code_of(dtype t) {
  return std::to_string(static_cast<int>(t));
}

std::string ctype(dtype t) {
  return "amd::dt<" + code_of(t) + ">::C";
}

std::string stype(dtype t) {
  return "amd::dt<" + code_of(t) + ">::S";
}

/// The device_math.cuh function of an elementwise opcode (not convert or select).
const char* function_of(opcode op) {
  switch (op) {
    case opcode::neg: return "op_neg";
    case opcode::abs: return "op_abs";
    case opcode::sin: return "op_sin";
    case opcode::cos: return "op_cos";
    case opcode::tanh: return "op_tanh";
    case opcode::exp: return "op_exp";
    case opcode::log: return "op_log";
    case opcode::sqrt: return "op_sqrt";
    case opcode::square: return "op_square";
    case opcode::add: return "op_add";
    case opcode::subtract: return "op_subtract";
    case opcode::multiply: return "op_multiply";
    case opcode::divide: return "op_divide";
    case opcode::floor_divide: return "op_floor_divide";
    case opcode::maximum: return "op_maximum";
    case opcode::minimum: return "op_minimum";
    case opcode::power: return "op_power";
    case opcode::equal: return "op_equal";
    case opcode::not_equal: return "op_not_equal";
    case opcode::less: return "op_less";
    case opcode::less_equal: return "op_less_equal";
    case opcode::greater: return "op_greater";
    case opcode::greater_equal: return "op_greater_equal";
    default: throw value_error("opcode " + std::string(opcode_name(op)) + " cannot be fused");
  }
}

/// Row-major strides of a shape.
shape_t strides_of(const shape_t& shape) {
  shape_t st(shape.size(), 1);
  for (auto d = static_cast<std::ptrdiff_t>(shape.size()) - 2; d >= 0; --d)
    st[static_cast<std::size_t>(d)] = st[static_cast<std::size_t>(d) + 1] * shape[static_cast<std::size_t>(d) + 1];
  return st;
}

/// Emits `target += coordinate_d(i) * factor[d]` for every dim of `shape` with a nonzero factor,
/// decomposing the linear index `i` of `shape` row-major.
void emit_index(std::ostringstream& out, const std::string& target, const shape_t& shape,
                const shape_t& factor) {
  auto rank = static_cast<std::ptrdiff_t>(shape.size());
  std::ptrdiff_t lowest = rank;
  for (std::ptrdiff_t d = 0; d < rank; ++d)
    if (factor[static_cast<std::size_t>(d)] != 0 && shape[static_cast<std::size_t>(d)] != 1) {
      lowest = d;
      break;
    }
  out << "    long long " << target << " = 0;\n";
  if (lowest == rank)
    return;
  out << "    { long long r = i;\n";
  for (auto d = rank - 1; d >= lowest; --d) {
    auto ext = shape[static_cast<std::size_t>(d)];
    auto f = factor[static_cast<std::size_t>(d)];
    if (d == lowest) {
      out << "      " << target << " += ";
      if (d == 0)
        out << "r";
      else
        out << "(r % " << ext << "LL)";
      out << " * " << f << "LL;\n";
      break;
    }
    if (f != 0 && ext != 1)
      out << "      " << target << " += (r % " << ext << "LL) * " << f << "LL;\n";
    out << "      r /= " << ext << "LL;\n";
  }
  out << "    }\n";
}

class writer {
public:
  writer(const program& p, const execution_plan& plan, const stage& s) : p_(p), plan_(plan), s_(s) {}

  std::string generate() {
    for (auto m : s_.members)
      emit_member(m);
    std::ostringstream head;
    head << "extern \"C\" __global__ void __launch_bounds__(256) " << fused_kernel_name << "(";
    std::vector<std::string> params;
    for (std::size_t k = 0; k < s_.inputs.size(); ++k)
      params.push_back("const " + stype(type_of(s_.inputs[k]).dtype) + "* __restrict__ in" + std::to_string(k));
    for (std::size_t k = 0; k < s_.outputs.size(); ++k)
      params.push_back(stype(type_of(s_.outputs[k]).dtype) + "* __restrict__ out" + std::to_string(k));
    for (std::size_t k = 0; k < s_.scalars.size(); ++k)
      params.push_back("double s" + std::to_string(k));
    for (auto m : s_.members)
      if (is_random(m))
        params.push_back("unsigned long long key" + std::to_string(m) + ", long long base" + std::to_string(m));
    params.push_back("long long n");
    for (std::size_t k = 0; k < params.size(); ++k)
      head << (k ? ",\n    " : "\n    ") << params[k];
    head << ") {\n  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;"
            " i += (long long)gridDim.x * blockDim.x) {\n";
    for (std::size_t k = 0; k < s_.inputs.size(); ++k)
      if (loaded_[k])
        head << "    const " << ctype(type_of(s_.inputs[k]).dtype) << " x" << k << " = amd::dt<"
             << code_of(type_of(s_.inputs[k]).dtype) << ">::load(in" << k << "[i]);\n";
    head << body_.str();
    for (std::size_t k = 0; k < s_.outputs.size(); ++k) {
      auto v = s_.outputs[k];
      head << "    out" << k << "[i] = amd::dt<" << code_of(type_of(v).dtype) << ">::store(v" << v << ");\n";
    }
    head << "  }\n}\n";
    return head.str();
  }

private:
  const value_type& type_of(std::int32_t v) const { return p_.code[static_cast<std::size_t>(v)].type; }

  bool is_random(std::int32_t v) const {
    auto op = p_.code[static_cast<std::size_t>(v)].op;
    return op == opcode::random_uniform || op == opcode::random_normal;
  }

  bool member(std::int32_t v) const {
    return std::find(s_.members.begin(), s_.members.end(), v) != s_.members.end();
  }

  std::size_t input_slot(std::int32_t v) const {
    return static_cast<std::size_t>(std::find(s_.inputs.begin(), s_.inputs.end(), v) - s_.inputs.begin());
  }

  /// How member code reads value `v` at the loop index.
  std::string ref(std::int32_t v) {
    auto root = plan_.constant_root[static_cast<std::size_t>(v)];
    if (root >= 0) {
      auto k = std::find(s_.scalars.begin(), s_.scalars.end(), root) - s_.scalars.begin();
      return "amd::cvt<" + code_of(type_of(v).dtype) + ", 7>(s" + std::to_string(k) + ")";
    }
    if (member(v))
      return named("v", v);
    auto k = input_slot(v);
    loaded_.resize(s_.inputs.size(), false);
    loaded_[k] = true;
    return named("x", k);
  }

  void emit_member(std::int32_t j) {
    loaded_.resize(s_.inputs.size(), false);
    auto& ins = p_.code[static_cast<std::size_t>(j)];
    auto d = code_of(ins.type.dtype);
    auto decl = "    " + ctype(ins.type.dtype) + " v" + std::to_string(j);
    auto arg = [&](std::size_t k) { return ref(ins.operands[k]); };
    switch (ins.op) {
      case opcode::iota: body_ << decl << " = amd::cvt<" << d << ", 3>(i);\n"; return;
      case opcode::reshape: body_ << decl << " = " << arg(0) << ";\n"; return;
      case opcode::convert:
        body_ << decl << " = amd::cvt<" << d << ", " << code_of(type_of(ins.operands[0]).dtype) << ">("
              << arg(0) << ");\n";
        return;
      case opcode::select:
        body_ << decl << " = " << arg(0) << " ? " << arg(1) << " : " << arg(2) << ";\n";
        return;
      case opcode::random_uniform:
      case opcode::random_normal: emit_random(j, decl); return;
      case opcode::broadcast_in_dim: emit_broadcast(j, decl); return;
      default: break;
    }
    auto operand_dtype = code_of(type_of(ins.operands[0]).dtype);
    body_ << decl << " = amd::" << function_of(ins.op) << "<" << operand_dtype << ">(" << arg(0);
    if (ins.operands.size() > 1)
      body_ << ", " << arg(1);
    body_ << ");\n";
  }

  /// Reads the materialized operand at the index the result index maps to.
  void emit_broadcast(std::int32_t j, const std::string& decl) {
    auto& ins = p_.code[static_cast<std::size_t>(j)];
    auto o = ins.operands[0];
    auto& in_shape = type_of(o).shape;
    auto in_strides = strides_of(in_shape);
    shape_t factor(ins.type.shape.size(), 0);
    for (std::size_t k = 0; k < ins.attrs.size(); ++k)
      if (in_shape[k] != 1)
        factor[static_cast<std::size_t>(ins.attrs[k])] = in_strides[k];
    auto k = input_slot(o);
    auto idx = named("b", j);
    emit_index(body_, idx, ins.type.shape, factor);
    body_ << decl << " = amd::dt<" << code_of(ins.type.dtype) << ">::load(in" << k << "[" << idx << "]);\n";
  }

  /// The value of the global element this index is: its global linear index is the local
  /// coordinates times the global strides plus `base` (the offsets times the global strides).
  void emit_random(std::int32_t j, const std::string& decl) {
    auto& ins = p_.code[static_cast<std::size_t>(j)];
    auto rank = static_cast<std::size_t>(ins.attrs[1]);
    shape_t global(ins.attrs.begin() + 2, ins.attrs.begin() + 2 + static_cast<std::ptrdiff_t>(rank));
    auto idx = named("g", j);
    emit_index(body_, idx, ins.type.shape, strides_of(global));
    bool normal = ins.op == opcode::random_normal;
    std::ostringstream value;
    value << "amd::random_value<" << code_of(ins.type.dtype) << ", " << (normal ? 1 : 0) << ">(key" << j << ", "
          << idx << " + base" << j << ")";
    if (ins.attrs.size() == 4 + 2 * rank) { // a float uniform with JAX's range: low, span by their bits
      auto bits = [](std::int64_t b) {
        return "__longlong_as_double((long long)" + std::to_string(static_cast<std::uint64_t>(b)) + "ULL)";
      };
      value.str("amd::random_in_range<" + code_of(ins.type.dtype) + ">(" + value.str() + ", "
                + bits(ins.attrs[2 + 2 * rank]) + ", " + bits(ins.attrs[3 + 2 * rank]) + ")");
    }
    body_ << decl << " = " << value.str() << ";\n";
  }

  const program& p_;
  const execution_plan& plan_;
  const stage& s_;
  std::ostringstream body_;
  std::vector<bool> loaded_;
};

} // namespace

std::int64_t random_base(const instruction& ins) {
  auto rank = static_cast<std::size_t>(ins.attrs[1]);
  shape_t global(ins.attrs.begin() + 2, ins.attrs.begin() + 2 + static_cast<std::ptrdiff_t>(rank));
  auto st = strides_of(global);
  std::int64_t base = 0;
  for (std::size_t d = 0; d < rank; ++d)
    base += ins.attrs[2 + rank + d] * st[d];
  return base;
}

std::string fused_kernel_body(const program& p, const execution_plan& plan, const stage& s) {
  if (s.kind != stage::kind_t::fused)
    throw value_error("fused_kernel_body needs a fused stage");
  return writer(p, plan, s).generate();
}

const std::string& fused_kernel_prelude() {
  static const std::string prelude = "// actormesh fused kernel (generated)\n"
                                     "#include \"devices/cuda/device_math.cuh\"\n"
                                     "#include \"devices/cuda/random_bridge.cuh\"\n";
  return prelude;
}

const std::vector<source_header>& fused_kernel_headers() {
  static const std::vector<source_header> headers = [] {
    auto all = embedded_device_sources();
    auto& std_headers = nvrtc_std_headers();
    all.insert(all.end(), std_headers.begin(), std_headers.end());
    return all;
  }();
  return headers;
}

std::string fused_kernel_source(const std::string& body) {
  return fused_kernel_prelude() + "\n" + body;
}

} // namespace am::detail::cuda
