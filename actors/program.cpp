#include "actors/program.hpp"

#include "actors/errors.hpp"

#include <sstream>

namespace am {

namespace {

bool is_elementwise(opcode op) noexcept {
  return op != opcode::parameter && op != opcode::constant && op != opcode::iota;
}

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

} // namespace

std::string_view opcode_name(opcode op) noexcept {
  switch (op) {
    case opcode::parameter: return "parameter";
    case opcode::constant: return "constant";
    case opcode::iota: return "iota";
    case opcode::convert: return "convert";
    case opcode::neg: return "neg";
    case opcode::abs: return "abs";
    case opcode::add: return "add";
    case opcode::subtract: return "subtract";
    case opcode::multiply: return "multiply";
    case opcode::divide: return "divide";
    case opcode::maximum: return "maximum";
    case opcode::minimum: return "minimum";
  }
  return "?";
}

int operand_count(opcode op) noexcept {
  switch (op) {
    case opcode::parameter:
    case opcode::constant:
    case opcode::iota: return 0;
    case opcode::convert:
    case opcode::neg:
    case opcode::abs: return 1;
    default: return 2;
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
    throw value_error("Invalid program '" + p.name + "' at %" + std::to_string(i) + ": " + why);
  };
  std::vector<bool> seen_param;
  for (std::size_t i = 0; i < p.code.size(); ++i) {
    auto& ins = p.code[i];
    if (static_cast<int>(ins.operands.size()) != operand_count(ins.op))
      fail(i, std::string(opcode_name(ins.op)) + " takes " + std::to_string(operand_count(ins.op))
                + " operands, got " + std::to_string(ins.operands.size()));
    for (auto o : ins.operands)
      if (o < 0 || static_cast<std::size_t>(o) >= i)
        fail(i, "operand %" + std::to_string(o) + " is not an earlier instruction");
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
    if (is_elementwise(ins.op)) {
      for (auto o : ins.operands) {
        auto& in = p.code[static_cast<std::size_t>(o)].type;
        if (in.shape != ins.type.shape)
          fail(i, "operand " + describe(in) + " does not match result " + describe(ins.type));
        if (ins.op != opcode::convert && in.dtype != ins.type.dtype)
          fail(i, "operand " + describe(in) + " does not match result " + describe(ins.type));
      }
    }
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
    if (ins.op == opcode::parameter)
      out << " #" << ins.index;
    if (ins.op == opcode::constant)
      out << ' ' << ins.scalar;
    for (std::size_t k = 0; k < ins.operands.size(); ++k)
      out << (k ? ", %" : " %") << ins.operands[k];
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
  instruction ins{opcode::parameter, std::move(type), {}, 0, parameters_++};
  return push(std::move(ins));
}

std::int32_t program_builder::constant(double value, value_type type) {
  return push(instruction{opcode::constant, std::move(type), {}, value, 0});
}

std::int32_t program_builder::iota(value_type type) {
  return push(instruction{opcode::iota, std::move(type), {}, 0, 0});
}

std::int32_t program_builder::convert(std::int32_t x, am::dtype to) {
  value_type t{to, type_of(x).shape};
  return push(instruction{opcode::convert, std::move(t), {x}, 0, 0});
}

std::int32_t program_builder::unary(opcode op, std::int32_t x) {
  if (operand_count(op) != 1)
    throw value_error(std::string(opcode_name(op)) + " is not a one-operand operation");
  return push(instruction{op, type_of(x), {x}, 0, 0});
}

std::int32_t program_builder::binary(opcode op, std::int32_t x, std::int32_t y) {
  if (operand_count(op) != 2)
    throw value_error(std::string(opcode_name(op)) + " is not a two-operand operation");
  return push(instruction{op, type_of(x), {x, y}, 0, 0});
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
