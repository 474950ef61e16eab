// Runs the real `actormesh` tool: `shards --json`, `visualize` pictures, and bad input exiting 2 with
// the library's message.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>
#include "support/build_paths.hpp"

namespace {

struct run_result {
  int status = -1;
  std::string output;
};

// Runs the tool with `args`; stdout, plus stderr when `with_stderr`.
run_result run_tool(const std::string& args, bool with_stderr = false) {
  const std::string command = std::string("'") + am::testing::tool_path() + "' " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  run_result r;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    r.output.append(buffer.data(), n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

} // namespace

TEST_CASE("cli_sharding: shards --json prints one line in device-id order", "[cli_sharding]") {
  const auto r = run_tool("shards --shape 8,2 --mesh 4x2 --axes x,y --spec x,y --json");
  CHECK(r.status == 0);
  CHECK(r.output ==
        "{\"shard_shape\":[2,1],\"devices\":["
        "{\"id\":0,\"index\":[[0,2],[0,1]],\"replica_id\":0},"
        "{\"id\":1,\"index\":[[0,2],[1,2]],\"replica_id\":0},"
        "{\"id\":2,\"index\":[[2,4],[0,1]],\"replica_id\":0},"
        "{\"id\":3,\"index\":[[2,4],[1,2]],\"replica_id\":0},"
        "{\"id\":4,\"index\":[[4,6],[0,1]],\"replica_id\":0},"
        "{\"id\":5,\"index\":[[4,6],[1,2]],\"replica_id\":0},"
        "{\"id\":6,\"index\":[[6,8],[0,1]],\"replica_id\":0},"
        "{\"id\":7,\"index\":[[6,8],[1,2]],\"replica_id\":0}]}\n");
}

TEST_CASE("cli_sharding: shards shows replicas and a readable table", "[cli_sharding]") {
  const auto json = run_tool("shards --shape 8 --mesh 2x2 --axes a,b --spec none --json");
  CHECK(json.status == 0);
  CHECK(json.output ==
        "{\"shard_shape\":[8],\"devices\":["
        "{\"id\":0,\"index\":[[0,8]],\"replica_id\":0},{\"id\":1,\"index\":[[0,8]],\"replica_id\":1},"
        "{\"id\":2,\"index\":[[0,8]],\"replica_id\":2},{\"id\":3,\"index\":[[0,8]],\"replica_id\":3}]}\n");
  const auto table = run_tool("shards --shape 8,2 --mesh 4x2 --axes x,y --spec x");
  CHECK(table.status == 0);
  CHECK(table.output.find("NamedSharding(mesh=Mesh('x': 4, 'y': 2), spec=P('x',))\n") == 0);
  CHECK(table.output.find("shard shape (2, 2)") != std::string::npos);
  CHECK(table.output.find("CpuDevice(id=5)") != std::string::npos);
  CHECK(table.output.find("[4:6, 0:2]") != std::string::npos);
}

TEST_CASE("cli_sharding: visualize draws the seed's 4x2 TPU picture", "[cli_sharding]") {
  const auto r = run_tool(
      "visualize --shape 8192,8192 --mesh 4x2 --axes a,b --spec a,b --device-order 0,1,2,3,6,7,4,5 --platform TPU");
  CHECK(r.status == 0);
  CHECK(r.output == "┌──────────┬──────────┐\n"
                    "│  TPU 0   │  TPU 1   │\n"
                    "├──────────┼──────────┤\n"
                    "│  TPU 2   │  TPU 3   │\n"
                    "├──────────┼──────────┤\n"
                    "│  TPU 6   │  TPU 7   │\n"
                    "├──────────┼──────────┤\n"
                    "│  TPU 4   │  TPU 5   │\n"
                    "└──────────┴──────────┘\n");
}

TEST_CASE("cli_sharding: visualize of a tuple spec and of a 1-D array", "[cli_sharding]") {
  const auto rows = run_tool("visualize --shape 8192,8192 --mesh 4x2 --axes a,b --spec a+b,none");
  CHECK(rows.status == 0);
  CHECK(rows.output.find("│         CPU 7         │\n└───────────────────────┘\n") != std::string::npos);
  const auto vec = run_tool("visualize --shape 8 --mesh 8 --spec x");
  CHECK(vec.status == 0);
  CHECK(vec.output == "┌───────┬───────┬───────┬───────┬───────┬───────┬───────┬───────┐\n"
                      "│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │ CPU 4 │ CPU 5 │ CPU 6 │ CPU 7 │\n"
                      "└───────┴───────┴───────┴───────┴───────┴───────┴───────┴───────┘\n");
}

TEST_CASE("cli_sharding: bad input exits 2 with the library's message", "[cli_sharding]") {
  const auto bad_spec = run_tool("shards --shape 8,2 --mesh 4x2 --axes x,y --spec x,,y --json", true);
  CHECK(bad_spec.status == 2);
  CHECK(bad_spec.output ==
        "Invalid partition spec 'x,,y' at position 3: empty entry; write entries separated by ',', none for an "
        "unsharded dimension and a+b for a tuple of mesh axes\n");
  const auto duplicate = run_tool("visualize --shape 8,2 --mesh 4x2 --axes x,y --spec x,x", true);
  CHECK(duplicate.status == 2);
  CHECK(duplicate.output ==
        "A single NamedSharding spec specification can map every mesh axis to at most one positional dimension, "
        "but P('x', 'x') has duplicate entries for `x`\n");
  const auto unknown = run_tool("shards --shape 8,2 --mesh 4x2 --axes x,y --spec z --json", true);
  CHECK(unknown.status == 2);
  CHECK(unknown.output == "Resource axis: z of P('z',) is not found in mesh: ('x', 'y').\n");
  const auto indivisible = run_tool("shards --shape 6,2 --mesh 4x2 --axes x,y --spec x", true);
  CHECK(indivisible.status == 2);
  CHECK(indivisible.output.find("implies that array axis 0 is partitioned 4 times, but the dimension size is 6") !=
        std::string::npos);
  const auto rank = run_tool("visualize --shape 2,2,2 --mesh 2 --spec x", true);
  CHECK(rank.status == 2);
  CHECK(rank.output == "`visualize_sharding` only works for shapes with 1 and 2 dimensions.\n");
  const auto order = run_tool("visualize --shape 8,8 --mesh 4x2 --spec x --device-order 0,1,2", true);
  CHECK(order.status == 2);
  CHECK(order.output.find("--device-order") != std::string::npos);
}
