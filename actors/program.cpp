#include "actormesh/actors/program.hpp"

#include "actormesh/actors/errors.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <numeric>
#include <sstream>

namespace am {

namespace {

constexpr std::array<std::string_view, opcode_count> opcode_names = {
  "parameter", "constant", "iota", "random_uniform", "random_normal",
  "convert", "neg", "abs", "sin", "cos", "tanh", "exp", "log", "sqrt", "square",
  "add", "subtract", "multiply", "divide", "floor_divide", "maximum", "minimum", "power",
  "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
  "select",
  "broadcast_in_dim", "reshape", "transpose", "slice", "concatenate",
  "reduce_sum", "reduce_max", "reduce_min", "dot",
};

std::string describe(const value_type& t) {
  std::string s(name(t.dtype));
  s += '[';
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    if (i)
      s += ',';
    s += std::to_string(t.shape[i]);
  }
  return s + ']';
}

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string s = "{";
  for (std::size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "}";
}

bool is_reduction(opcode op) {
  return op == opcode::reduce_sum || op == opcode::reduce_max || op == opcode::reduce_min;
}

/// Checks one instruction against its operands' types; returns an empty string when it is fine.
std::string check_instruction(const instruction& ins, const std::vector<const value_type*>& in) {
  auto& out = ins.type;
  auto rank = static_cast<std::int64_t>(out.shape.size());
  if (is_elementwise(ins.op)) {
    for (std::size_t k = 0; k < in.size(); ++k) {
      if (in[k]->shape != out.shape)
        return "operand " + describe(*in[k]) + " does not match result " + describe(out);
      bool typed_operand = !(ins.op == opcode::convert || is_comparison(ins.op)
                             || (ins.op == opcode::select && k == 0));
      if (typed_operand && in[k]->dtype != out.dtype)
        return "operand " + describe(*in[k]) + " does not match result " + describe(out);
    }
    if (is_comparison(ins.op) && (out.dtype != dtype::bool_ || in[0]->dtype != in[1]->dtype))
      return "a comparison takes operands of one dtype and gives bool";
    if (ins.op == opcode::select && in[0]->dtype != dtype::bool_)
      return "select needs a bool predicate";
    return {};
  }
  switch (ins.op) {
    case opcode::random_uniform:
    case opcode::random_normal: {
      if (!is_floating(out.dtype) && (ins.op == opcode::random_normal || out.dtype == dtype::bool_))
        return ins.op == opcode::random_normal ? "random normal values need a floating dtype"
                                               : "random bits need an integer or floating dtype";
      auto count = static_cast<std::int64_t>(ins.attrs.size());
      bool ranged = ins.op == opcode::random_uniform && is_floating(out.dtype);
      if (count < 2 || ins.attrs[1] != rank || (count != 2 + 2 * rank && !(ranged && count == 4 + 2 * rank)))
        return "random attributes must be key, rank, global dims, offsets (and low, span for a float uniform)";
      for (std::int64_t d = 0; d < rank; ++d)
        if (ins.attrs[2 + rank + d] < 0 || ins.attrs[2 + rank + d] + out.shape[d] > ins.attrs[2 + d])
          return "random block lies outside the global shape";
      return {};
    }
    case opcode::broadcast_in_dim: {
      if (in[0]->dtype != out.dtype || ins.attrs.size() != in[0]->shape.size())
        return "broadcast_in_dim needs one result dim per operand dim";
      for (std::size_t i = 0; i < ins.attrs.size(); ++i) {
        auto d = ins.attrs[i];
        if (d < 0 || d >= rank || (i > 0 && d <= ins.attrs[i - 1]))
          return "broadcast_in_dim dims must be increasing result dims";
        if (in[0]->shape[i] != 1 && in[0]->shape[i] != out.shape[static_cast<std::size_t>(d)])
          return "cannot broadcast " + describe(*in[0]) + " to " + describe(out);
      }
      return {};
    }
    case opcode::reshape:
      if (in[0]->dtype != out.dtype || element_count(in[0]->shape) != element_count(out.shape))
        return "cannot reshape " + describe(*in[0]) + " to " + describe(out);
      return {};
    case opcode::transpose: {
      auto perm = ins.attrs;
      std::sort(perm.begin(), perm.end());
      std::vector<std::int64_t> iota_dims(in[0]->shape.size());
      std::iota(iota_dims.begin(), iota_dims.end(), 0);
      if (perm != iota_dims || in[0]->dtype != out.dtype)
        return "transpose needs a permutation of the operand's dims";
      for (std::int64_t i = 0; i < rank; ++i)
        if (out.shape[static_cast<std::size_t>(i)] != in[0]->shape[static_cast<std::size_t>(ins.attrs[static_cast<std::size_t>(i)])])
          return "transpose result shape does not match the permutation";
      return {};
    }
    case opcode::slice: {
      auto r = in[0]->shape.size();
      if (ins.attrs.size() != 2 * r || out.shape.size() != r || in[0]->dtype != out.dtype)
        return "slice needs starts and limits for every dim";
      for (std::size_t d = 0; d < r; ++d) {
        auto start = ins.attrs[d], limit = ins.attrs[r + d];
        if (start < 0 || limit < start || limit > in[0]->shape[d] || out.shape[d] != limit - start)
          return "slice bounds " + dims_text(ins.attrs) + " do not fit " + describe(*in[0]);
      }
      return {};
    }
    case opcode::concatenate: {
      if (in.empty() || ins.index < 0 || ins.index >= rank)
        return "concatenate needs operands and an axis within the rank";
      std::int64_t total = 0;
      for (auto* t : in) {
        if (t->dtype != out.dtype || t->shape.size() != out.shape.size())
          return "concatenate operands must match the result's dtype and rank";
        for (std::int64_t d = 0; d < rank; ++d)
          if (d != ins.index && t->shape[static_cast<std::size_t>(d)] != out.shape[static_cast<std::size_t>(d)])
            return "concatenate operands differ outside the axis";
        total += t->shape[static_cast<std::size_t>(ins.index)];
      }
      if (total != out.shape[static_cast<std::size_t>(ins.index)])
        return "concatenate result size along the axis is wrong";
      return {};
    }
    case opcode::reduce_sum:
    case opcode::reduce_max:
    case opcode::reduce_min: {
      shape_t kept;
      for (std::size_t d = 0; d < in[0]->shape.size(); ++d)
        if (std::find(ins.attrs.begin(), ins.attrs.end(), static_cast<std::int64_t>(d)) == ins.attrs.end())
          kept.push_back(in[0]->shape[d]);
      if (!std::is_sorted(ins.attrs.begin(), ins.attrs.end())
          || std::adjacent_find(ins.attrs.begin(), ins.attrs.end()) != ins.attrs.end()
          || (!ins.attrs.empty() && (ins.attrs.front() < 0
                                     || ins.attrs.back() >= static_cast<std::int64_t>(in[0]->shape.size()))))
        return "reduction axes must be sorted, distinct dims of the operand";
      if (kept != out.shape || in[0]->dtype != out.dtype)
        return "reduction result must drop the reduced dims";
      return {};
    }
    case opcode::dot: {
      auto& xs = in[0]->shape;
      auto& ys = in[1]->shape;
      const char* wrong = "dot needs [m,k] x [k,n] -> [m,n], or [B,m,k] x [B,k,n] or [k,n] -> [B,m,n], of one dtype";
      bool flags = ins.attrs.empty()
                   || (ins.attrs.size() == 2 && (ins.attrs[0] == 0 || ins.attrs[0] == 1)
                       && (ins.attrs[1] == 0 || ins.attrs[1] == 1));
      if (!flags || (xs.size() != 2 && xs.size() != 3) || (ys.size() != 2 && ys.size() != 3)
          || (ys.size() == 3 && (xs.size() != 3 || xs[0] != ys[0])) || in[0]->dtype != out.dtype
          || in[1]->dtype != out.dtype)
        return wrong;
      bool tx = !ins.attrs.empty() && ins.attrs[0] == 1, ty = !ins.attrs.empty() && ins.attrs[1] == 1;
      auto r = xs.size();
      auto m = tx ? xs[r - 1] : xs[r - 2], k = tx ? xs[r - 2] : xs[r - 1];
      auto yk = ty ? ys[ys.size() - 1] : ys[ys.size() - 2], n = ty ? ys[ys.size() - 2] : ys[ys.size() - 1];
      shape_t want = r == 3 ? shape_t{xs[0], m, n} : shape_t{m, n};
      if (k != yk || out.shape != want)
        return wrong;
      return {};
    }
    default: return {};
  }
}

} // namespace

std::string_view opcode_name(opcode op) noexcept {
  auto i = static_cast<std::size_t>(op);
  return i < opcode_names.size() ? opcode_names[i] : "?";
}

int operand_count(opcode op) noexcept {
  switch (op) {
    case opcode::parameter:
    case opcode::constant:
    case opcode::iota:
    case opcode::random_uniform:
    case opcode::random_normal: return 0;
    case opcode::select: return 3;
    case opcode::concatenate: return -1;
    case opcode::dot: return 2;
    default:
      if (op >= opcode::add && op <= opcode::greater_equal)
        return 2;
      return 1;
  }
}

int program::parameter_count() const noexcept {
  int n = 0;
  for (auto& ins : code)
    if (ins.op == opcode::parameter)
      ++n;
  return n;
}

std::vector<value_type> program::input_types() const {
  std::vector<value_type> types(static_cast<std::size_t>(parameter_count()));
  for (auto& ins : code)
    if (ins.op == opcode::parameter)
      types[static_cast<std::size_t>(ins.index)] = ins.type;
  return types;
}

std::vector<value_type> program::output_types() const {
  std::vector<value_type> types;
  for (auto out : outputs)
    types.push_back(code[static_cast<std::size_t>(out)].type);
  return types;
}

void validate(const program& p) {
  auto fail = [&](std::size_t i, const std::string& why) {
    throw value_error("Invalid program '" + p.name + "' at %" + std::to_string(i) + " ("
                      + std::string(opcode_name(p.code[i].op)) + "): " + why);
  };
  std::vector<bool> seen_param;
  for (std::size_t i = 0; i < p.code.size(); ++i) {
    auto& ins = p.code[i];
    int expected = operand_count(ins.op);
    if (expected >= 0 && static_cast<int>(ins.operands.size()) != expected)
      fail(i, "takes " + std::to_string(expected) + " operands, got " + std::to_string(ins.operands.size()));
    std::vector<const value_type*> in;
    for (auto o : ins.operands) {
      if (o < 0 || static_cast<std::size_t>(o) >= i)
        fail(i, "operand %" + std::to_string(o) + " is not an earlier instruction");
      in.push_back(&p.code[static_cast<std::size_t>(o)].type);
    }
    for (auto d : ins.type.shape)
      if (d < 0)
        fail(i, "negative dimension in " + describe(ins.type));
    if (ins.op == opcode::parameter) {
      if (ins.index < 0)
        fail(i, "negative parameter number");
      auto k = static_cast<std::size_t>(ins.index);
      if (seen_param.size() <= k)
        seen_param.resize(k + 1, false);
      if (seen_param[k])
        fail(i, "parameter " + std::to_string(k) + " declared twice");
      seen_param[k] = true;
    }
    if (auto why = check_instruction(ins, in); !why.empty())
      fail(i, why);
  }
  for (std::size_t k = 0; k < seen_param.size(); ++k)
    if (!seen_param[k])
      throw value_error("Invalid program '" + p.name + "': parameter " + std::to_string(k) + " missing");
  if (p.outputs.empty())
    throw value_error("Invalid program '" + p.name + "': no outputs");
  for (auto o : p.outputs)
    if (o < 0 || static_cast<std::size_t>(o) >= p.code.size())
      throw value_error("Invalid program '" + p.name + "': output %" + std::to_string(o) + " out of range");
}

std::string to_string(const program& p) {
  std::ostringstream out;
  out << "program " << p.name << '\n';
  for (std::size_t i = 0; i < p.code.size(); ++i) {
    auto& ins = p.code[i];
    out << "  %" << i << " = " << opcode_name(ins.op) << ' ' << describe(ins.type);
    if (ins.op == opcode::parameter || ins.op == opcode::concatenate)
      out << " #" << ins.index;
    if (ins.op == opcode::constant)
      out << ' ' << ins.scalar;
    for (std::size_t k = 0; k < ins.operands.size(); ++k)
      out << (k ? ", %" : " %") << ins.operands[k];
    if (!ins.attrs.empty())
      out << ' ' << dims_text(ins.attrs);
    out << '\n';
  }
  out << "  return";
  for (std::size_t k = 0; k < p.outputs.size(); ++k)
    out << (k ? ", %" : " %") << p.outputs[k];
  return out.str();
}

program_builder::program_builder(std::string name) {
  program_.name = std::move(name);
}

std::int32_t program_builder::push(instruction ins) {
  program_.code.push_back(std::move(ins));
  return static_cast<std::int32_t>(program_.code.size() - 1);
}

std::int32_t program_builder::parameter(value_type type) {
  instruction ins{opcode::parameter, std::move(type), {}, 0, parameters_++, {}};
  return push(std::move(ins));
}

std::int32_t program_builder::constant(double value, value_type type) {
  return push(instruction{opcode::constant, std::move(type), {}, value, 0, {}});
}

std::int32_t program_builder::iota(value_type type) {
  return push(instruction{opcode::iota, std::move(type), {}, 0, 0, {}});
}

std::int32_t program_builder::convert(std::int32_t x, am::dtype to) {
  value_type t{to, type_of(x).shape};
  return push(instruction{opcode::convert, std::move(t), {x}, 0, 0, {}});
}

std::int32_t program_builder::unary(opcode op, std::int32_t x) {
  if (!is_elementwise(op) || operand_count(op) != 1 || op == opcode::convert)
    throw value_error(std::string(opcode_name(op)) + " is not a one-operand elementwise operation");
  return push(instruction{op, type_of(x), {x}, 0, 0, {}});
}

std::int32_t program_builder::binary(opcode op, std::int32_t x, std::int32_t y) {
  if (!is_elementwise(op) || operand_count(op) != 2)
    throw value_error(std::string(opcode_name(op)) + " is not a two-operand elementwise operation");
  value_type t = type_of(x);
  if (is_comparison(op))
    t.dtype = dtype::bool_;
  return push(instruction{op, std::move(t), {x, y}, 0, 0, {}});
}

std::int32_t program_builder::select(std::int32_t pred, std::int32_t on_true, std::int32_t on_false) {
  return push(instruction{opcode::select, type_of(on_true), {pred, on_true, on_false}, 0, 0, {}});
}

std::int32_t program_builder::broadcast_in_dim(std::int32_t x, shape_t shape, std::vector<std::int64_t> dims) {
  value_type t{type_of(x).dtype, std::move(shape)};
  return push(instruction{opcode::broadcast_in_dim, std::move(t), {x}, 0, 0, std::move(dims)});
}

std::int32_t program_builder::reshape(std::int32_t x, shape_t shape) {
  value_type t{type_of(x).dtype, std::move(shape)};
  return push(instruction{opcode::reshape, std::move(t), {x}, 0, 0, {}});
}

std::int32_t program_builder::transpose(std::int32_t x, std::vector<std::int64_t> permutation) {
  auto& in = type_of(x);
  value_type t{in.dtype, {}};
  for (auto d : permutation) {
    if (d < 0 || static_cast<std::size_t>(d) >= in.shape.size())
      throw value_error("transpose: axis " + std::to_string(d) + " is out of bounds for rank "
                        + std::to_string(in.shape.size()));
    t.shape.push_back(in.shape[static_cast<std::size_t>(d)]);
  }
  return push(instruction{opcode::transpose, std::move(t), {x}, 0, 0, std::move(permutation)});
}

std::int32_t program_builder::slice(std::int32_t x, const std::vector<std::int64_t>& starts,
                                    const std::vector<std::int64_t>& limits) {
  value_type t{type_of(x).dtype, {}};
  std::vector<std::int64_t> attrs = starts;
  attrs.insert(attrs.end(), limits.begin(), limits.end());
  for (std::size_t d = 0; d < starts.size() && d < limits.size(); ++d)
    t.shape.push_back(limits[d] - starts[d]);
  return push(instruction{opcode::slice, std::move(t), {x}, 0, 0, std::move(attrs)});
}

std::int32_t program_builder::concatenate(const std::vector<std::int32_t>& xs, std::int64_t axis) {
  if (xs.empty())
    throw value_error("concatenate needs at least one operand");
  value_type t = type_of(xs.front());
  if (axis < 0 || static_cast<std::size_t>(axis) >= t.shape.size())
    throw value_error("concatenate: axis " + std::to_string(axis) + " is out of bounds");
  t.shape[static_cast<std::size_t>(axis)] = 0;
  for (auto x : xs)
    t.shape[static_cast<std::size_t>(axis)] += type_of(x).shape.at(static_cast<std::size_t>(axis));
  return push(instruction{opcode::concatenate, std::move(t), xs, 0, axis, {}});
}

std::int32_t program_builder::reduce(opcode op, std::int32_t x, std::vector<std::int64_t> axes) {
  if (!is_reduction(op))
    throw value_error(std::string(opcode_name(op)) + " is not a reduction");
  std::sort(axes.begin(), axes.end());
  auto& in = type_of(x);
  value_type t{in.dtype, {}};
  for (std::size_t d = 0; d < in.shape.size(); ++d)
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d)))
      t.shape.push_back(in.shape[d]);
  return push(instruction{op, std::move(t), {x}, 0, 0, std::move(axes)});
}

std::int32_t program_builder::dot(std::int32_t x, std::int32_t y, bool transpose_x, bool transpose_y) {
  auto& a = type_of(x);
  auto& b = type_of(y);
  if ((a.shape.size() != 2 && a.shape.size() != 3) || (b.shape.size() != 2 && b.shape.size() != 3)
      || (b.shape.size() == 3 && a.shape.size() != 3))
    throw value_error("dot needs 2-D operands, or a 3-D x with a 2-D or 3-D y");
  auto r = a.shape.size();
  auto m = transpose_x ? a.shape[r - 1] : a.shape[r - 2];
  auto n = transpose_y ? b.shape[b.shape.size() - 2] : b.shape.back();
  value_type t{a.dtype, r == 3 ? shape_t{a.shape[0], m, n} : shape_t{m, n}};
  std::vector<std::int64_t> flags;
  if (transpose_x || transpose_y)
    flags = {transpose_x ? 1 : 0, transpose_y ? 1 : 0};
  return push(instruction{opcode::dot, std::move(t), {x, y}, 0, 0, std::move(flags)});
}

std::int32_t program_builder::random(opcode op, value_type type, std::uint64_t key,
                                     const shape_t& global_shape, const std::vector<std::int64_t>& offsets,
                                     const std::vector<double>& range) {
  if (op != opcode::random_uniform && op != opcode::random_normal)
    throw value_error(std::string(opcode_name(op)) + " is not a random source");
  std::vector<std::int64_t> attrs{static_cast<std::int64_t>(key), static_cast<std::int64_t>(global_shape.size())};
  attrs.insert(attrs.end(), global_shape.begin(), global_shape.end());
  attrs.insert(attrs.end(), offsets.begin(), offsets.end());
  for (double v : range)
    attrs.push_back(std::bit_cast<std::int64_t>(v));
  return push(instruction{op, std::move(type), {}, 0, 0, std::move(attrs)});
}

void program_builder::output(std::int32_t value) {
  type_of(value);
  program_.outputs.push_back(value);
}

const value_type& program_builder::type_of(std::int32_t value) const {
  if (value < 0 || static_cast<std::size_t>(value) >= program_.code.size())
    throw value_error("Program '" + program_.name + "' has no value %" + std::to_string(value));
  return program_.code[static_cast<std::size_t>(value)].type;
}

std::shared_ptr<const program> program_builder::build() {
  validate(program_);
  return std::make_shared<const program>(program_);
}

} // namespace am
