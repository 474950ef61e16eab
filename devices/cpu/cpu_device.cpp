#include "devices/cpu/cpu_device.hpp"

#include "devices/cpu/cpu_buffer.hpp"
#include "devices/cpu/cpu_runner.hpp"
#include "devices/detail/device_actor.hpp"

#include <cstring>
#include <list>
#include <unordered_map>

namespace am::detail {

namespace {

/// Compiled programs by program object, least recently used first out. Programs are immutable, so
/// the shared pointer (kept here, so its address cannot be reused) identifies one.
class program_cache {
public:
  const compiled_program& get(const std::shared_ptr<const program>& p) {
    auto it = index_.find(p.get());
    if (it != index_.end()) {
      entries_.splice(entries_.begin(), entries_, it->second);
      return *it->second->compiled;
    }
    auto compiled = compile_for_cpu(*p);
    entries_.push_front({p, std::move(compiled)});
    index_[p.get()] = entries_.begin();
    if (entries_.size() > capacity) {
      index_.erase(entries_.back().source.get());
      entries_.pop_back();
    }
    return *entries_.front().compiled;
  }

private:
  static constexpr std::size_t capacity = 512;
  struct entry {
    std::shared_ptr<const program> source;
    std::shared_ptr<const compiled_program> compiled;
  };
  std::list<entry> entries_;
  std::unordered_map<const program*, std::list<entry>::iterator> index_;
};

class cpu_executor final : public device_executor {
public:
  cpu_executor(device dev, std::shared_ptr<buffer_pool> pool) : dev_(dev), pool_(std::move(pool)) {}

  void run_program(program_call& call) override {
    std::vector<buffer_ref> inputs;
    inputs.reserve(call.inputs.size());
    for (auto& in : call.inputs)
      inputs.push_back(in.get());
    auto& compiled = cache_.get(call.code);
    auto outputs = run_compiled(compiled, *call.code, inputs, pool_, scratch_);
    for (std::size_t k = 0; k < outputs.size(); ++k)
      call.outputs[k].set_value(std::move(outputs[k]));
  }

  void upload(upload_call& call) override {
    auto bytes = element_count(call.type.shape) * static_cast<std::int64_t>(size_of(call.type.dtype));
    if (!call.write && static_cast<std::int64_t>(call.bytes->size()) != bytes)
      throw value_error("device_put: got " + std::to_string(call.bytes->size()) + " bytes for a buffer of "
                        + std::to_string(bytes));
    auto out = make_cpu_buffer(call.type.dtype, call.type.shape, pool_);
    auto* destination = static_cast<std::byte*>(out->data());
    if (call.write)
      call.write(destination, out->byte_size()); // straight into the shard's memory
    else if (out->byte_size() > 0)
      std::memcpy(destination, call.bytes->data(), out->byte_size());
    call.output.set_value(std::move(out));
  }

  void fetch(fetch_call& call) override {
    auto in = host_readable(call.input.get(), pool_);
    std::vector<std::byte> bytes(in->byte_size());
    if (!bytes.empty())
      std::memcpy(bytes.data(), in->data(), bytes.size());
    call.output.set_value(std::move(bytes));
  }

private:
  device dev_;
  std::shared_ptr<buffer_pool> pool_;
  program_cache cache_;
  cpu_scratch scratch_;
};

} // namespace

caf::actor spawn_cpu_device(caf::actor_system& system, const device& dev, std::shared_ptr<buffer_pool> pool,
                            stop_signal_ptr stop) {
  return spawn_device_actor(system, dev, std::make_unique<cpu_executor>(dev, std::move(pool)), std::move(stop));
}

} // namespace am::detail
