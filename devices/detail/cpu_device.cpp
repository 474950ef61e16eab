#include "devices/detail/cpu_device.hpp"

#include "devices/detail/cpu_buffer.hpp"
#include "devices/detail/cpu_interpreter.hpp"
#include "devices/detail/device_actor.hpp"

#include <cstring>

namespace am::detail {

namespace {

class cpu_executor final : public device_executor {
public:
  explicit cpu_executor(device dev) : dev_(dev) {}

  void run_program(program_call& call) override {
    std::vector<buffer_ref> inputs;
    inputs.reserve(call.inputs.size());
    for (auto& in : call.inputs)
      inputs.push_back(in.get());
    auto outputs = run_on_cpu(*call.code, inputs, dev_.id);
    for (std::size_t k = 0; k < outputs.size(); ++k)
      call.outputs[k].set_value(std::move(outputs[k]));
  }

  void upload(upload_call& call) override {
    auto out = make_cpu_buffer(call.type.dtype, call.type.shape, dev_.id);
    if (call.bytes->size() != out->byte_size())
      throw value_error("device_put: got " + std::to_string(call.bytes->size()) + " bytes for a buffer of "
                        + std::to_string(out->byte_size()));
    std::memcpy(out->data(), call.bytes->data(), out->byte_size());
    call.output.set_value(std::move(out));
  }

  void fetch(fetch_call& call) override {
    auto& in = call.input.get();
    std::vector<std::byte> bytes(in->byte_size());
    std::memcpy(bytes.data(), in->data(), bytes.size());
    call.output.set_value(std::move(bytes));
  }

private:
  device dev_;
};

} // namespace

caf::actor spawn_cpu_device(caf::actor_system& system, const device& dev) {
  return spawn_device_actor(system, dev, std::make_unique<cpu_executor>(dev));
}

} // namespace am::detail
