// Uses only the installed public surface: start a runtime, list devices, run one program.
#include <actormesh.hpp>

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
  return values[3] == 13 ? 0 : 1;
}
