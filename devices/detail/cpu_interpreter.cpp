#include "devices/detail/cpu_interpreter.hpp"

#include "actors/errors.hpp"
#include "devices/detail/cpu_buffer.hpp"
#include "devices/detail/dtype_dispatch.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace am::detail {

namespace {

template <class T>
T* typed(const buffer_ref& b) {
  return static_cast<T*>(b->data());
}

/// Applies a one- or two-operand elementwise operation in the element type's compute type.
template <class T>
void elementwise(const instruction& ins, const std::vector<buffer_ref>& values, buffer_ref& out) {
  using C = compute_t<T>;
  auto n = out->size();
  T* dst = typed<T>(out);
  const T* x = typed<T>(values[static_cast<std::size_t>(ins.operands[0])]);
  auto store = [&](std::int64_t i, C v) { dst[i] = convert_element<T>(v); };
  auto load = [](const T* p, std::int64_t i) { return static_cast<C>(p[i]); };
  if (operand_count(ins.op) == 1) {
    for (std::int64_t i = 0; i < n; ++i) {
      C a = load(x, i);
      switch (ins.op) {
        case opcode::neg: store(i, static_cast<C>(-a)); break;
        case opcode::abs: store(i, a < C(0) ? static_cast<C>(-a) : a); break;
        default: throw value_error("not a unary opcode");
      }
    }
    return;
  }
  const T* y = typed<T>(values[static_cast<std::size_t>(ins.operands[1])]);
  for (std::int64_t i = 0; i < n; ++i) {
    C a = load(x, i), b = load(y, i);
    switch (ins.op) {
      case opcode::add: store(i, static_cast<C>(a + b)); break;
      case opcode::subtract: store(i, static_cast<C>(a - b)); break;
      case opcode::multiply: store(i, static_cast<C>(a * b)); break;
      case opcode::divide:
        if constexpr (std::is_integral_v<C>)
          store(i, b == 0 ? C(0) : static_cast<C>(a / b));
        else
          store(i, a / b);
        break;
      case opcode::maximum:
        if constexpr (std::is_floating_point_v<C>)
          store(i, (std::isnan(a) || std::isnan(b)) ? a + b : std::max(a, b));
        else
          store(i, std::max(a, b));
        break;
      case opcode::minimum:
        if constexpr (std::is_floating_point_v<C>)
          store(i, (std::isnan(a) || std::isnan(b)) ? a + b : std::min(a, b));
        else
          store(i, std::min(a, b));
        break;
      default: throw value_error("not a binary opcode");
    }
  }
}

void check_inputs(const program& p, const std::vector<buffer_ref>& inputs) {
  auto parameters = static_cast<std::size_t>(p.parameter_count());
  if (parameters != inputs.size())
    throw value_error("Program '" + p.name + "' takes " + std::to_string(parameters) + " inputs, got "
                      + std::to_string(inputs.size()));
  for (auto& ins : p.code) {
    if (ins.op != opcode::parameter)
      continue;
    auto& in = inputs[static_cast<std::size_t>(ins.index)];
    if (in->dtype() != ins.type.dtype || in->shape() != ins.type.shape)
      throw value_error("Program '" + p.name + "': input " + std::to_string(ins.index) + " has the "
                        + "wrong type (expected " + std::string(name(ins.type.dtype)) + ")");
  }
}

} // namespace

std::vector<buffer_ref> run_on_cpu(const program& p, const std::vector<buffer_ref>& inputs,
                                   int device_id) {
  check_inputs(p, inputs);
  std::vector<buffer_ref> values(p.code.size());
  for (std::size_t i = 0; i < p.code.size(); ++i) {
    auto& ins = p.code[i];
    if (ins.op == opcode::parameter) {
      values[i] = inputs[static_cast<std::size_t>(ins.index)];
      continue;
    }
    auto out = make_cpu_buffer(ins.type.dtype, ins.type.shape, device_id);
    visit_dtype(ins.type.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dst = typed<T>(out);
      auto n = out->size();
      switch (ins.op) {
        case opcode::constant:
          std::fill(dst, dst + n, convert_element<T>(ins.scalar));
          break;
        case opcode::iota:
          for (std::int64_t k = 0; k < n; ++k)
            dst[k] = convert_element<T>(k);
          break;
        case opcode::convert: {
          auto& src = values[static_cast<std::size_t>(ins.operands[0])];
          visit_dtype(src->dtype(), [&](auto from_tag) {
            using F = typename decltype(from_tag)::type;
            const F* s = typed<F>(src);
            for (std::int64_t k = 0; k < n; ++k)
              dst[k] = convert_element<T>(s[k]);
          });
          break;
        }
        default: elementwise<T>(ins, values, out);
      }
    });
    values[i] = std::move(out);
  }
  std::vector<buffer_ref> outputs;
  outputs.reserve(p.outputs.size());
  for (auto o : p.outputs)
    outputs.push_back(values[static_cast<std::size_t>(o)]);
  return outputs;
}

} // namespace am::detail
