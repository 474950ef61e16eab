// Uses only the installed public surface: start a runtime, list devices, run one program.
#include <actormesh.hpp>
#include <actormesh/sharding/mesh.hpp> // one public header by its installed name

#include <chrono>
#include <cstdio>
#include <cstring>

int main() {
  am::options opts;
  opts.cpu_devices = 3;
  am::runtime rt(opts);
  auto devs = am::devices(am::platform::cpu);
  am::value_type t{am::dtype::int32, {4}};
  am::program_builder b("consumer");
  b.output(b.binary(am::opcode::add, b.iota(t), b.constant(10, t)));
  auto out = am::execute(devs[2], b.build(), {})[0];
  auto bytes = am::fetch(devs[2], out).get(std::chrono::seconds(30));
  int values[4];
  std::memcpy(values, bytes.data(), sizeof(values));
  std::printf("consumer: %zu devices, last %s, result %d %d %d %d\n", devs.size(),
              am::to_string(devs.back()).c_str(), values[0], values[1], values[2], values[3]);
  // The array layer through the installed headers: a sharded array, a jitted function, a reduction.
  am::mesh m(am::create_device_mesh({3}, devs), {"x"});
  auto x = am::device_put(am::host_array::arange(6, am::dtype::float32),
                          am::make_named_sharding(m, am::P("x")));
  auto f = am::jit([](const am::array& a) { return a * 2.0 + 1.0; });
  auto total = am::sum(f(x)).to_host().item<float>();
  std::printf("consumer: jit sum %g\n", static_cast<double>(total));
  // The live counters through the installed header: the program above ran on devs[2].
  auto stats = am::runtime_stats();
  bool counted = stats.devices.size() == 3 && stats.devices[2].calls_done >= 2;
  std::printf("consumer: runtime_stats %zu devices, %llu calls done on the last\n", stats.devices.size(),
              static_cast<unsigned long long>(stats.devices.empty() ? 0 : stats.devices.back().calls_done));
  // The documented specialize() forms (doc/colocated.md): designated initializers that name one
  // field, which -Wall -Wextra -Werror (this project's flags) must accept.
  am::specialization on_devices{.devices = am::colocated_cpu_devices(devs)};
  am::specialization with_specs{.out_specs_fn = [](const am::spec_tree& in) { return in[0]; }};
  std::printf("consumer: specialization on %zu devices\n", on_devices.devices->size());
  bool specialized = !on_devices.devices->empty() && with_specs.out_specs_fn && !with_specs.devices;
  return values[3] == 13 && specialized && total == 36.0f && counted ? 0 : 1;
}
