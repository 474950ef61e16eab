// Option precedence: defaults < AM_* environment < --am-* flags < values set in code.
#include "actors/detail/closest_name.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/options.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>

namespace {

am::environment_lookup fake_env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

} // namespace

TEST_CASE("defaults apply when nothing is set", "[options]") {
  auto o = am::resolve_options({}, {}, fake_env({}));
  CHECK(o.cpu_devices == 8);
  CHECK(o.scheduler == am::scheduler_policy::sharing);
  CHECK(o.use_gpus);
  CHECK(o.log_level == "warning");
}

TEST_CASE("environment overrides defaults, flags override environment, code overrides flags",
          "[options]") {
  auto env = fake_env({{"AM_CPU_DEVICES", "4"}, {"AM_SCHEDULER", "stealing"}, {"AM_USE_GPUS", "off"},
                       {"AM_LOG", "info"}});
  auto from_env = am::resolve_options({}, {}, env);
  CHECK(from_env.cpu_devices == 4);
  CHECK(from_env.scheduler == am::scheduler_policy::stealing);
  CHECK_FALSE(from_env.use_gpus);
  CHECK(from_env.log_level == "info");

  std::vector<std::string> args{"prog", "--am-cpu-devices", "6", "--other", "--am-gpus=on"};
  auto from_flags = am::resolve_options({}, args, env);
  CHECK(from_flags.cpu_devices == 6);
  CHECK(from_flags.use_gpus);
  CHECK(from_flags.scheduler == am::scheduler_policy::stealing);

  am::options code;
  code.cpu_devices = 2;
  code.scheduler = am::scheduler_policy::sharing;
  auto from_code = am::resolve_options(code, args, env);
  CHECK(from_code.cpu_devices == 2);
  CHECK(from_code.scheduler == am::scheduler_policy::sharing);
  CHECK(from_code.use_gpus); // still from the flag
}

TEST_CASE("bad values name their source", "[options]") {
  CHECK_THROWS_WITH(am::resolve_options({}, {}, fake_env({{"AM_CPU_DEVICES", "zero"}})),
                    "AM_CPU_DEVICES='zero' is not an integer >= 1");
  CHECK_THROWS_WITH(am::resolve_options({}, {"--am-cpu-devices=0"}, fake_env({})),
                    "--am-cpu-devices='0' is not an integer >= 1");
  CHECK_THROWS_WITH(am::resolve_options({}, {"--am-scheduler", "fifo"}, fake_env({})),
                    "--am-scheduler='fifo' is not a scheduler policy (sharing or stealing)");
  CHECK_THROWS_WITH(am::resolve_options({}, {"--am-log"}, fake_env({})), "--am-log needs a value");
  am::options code;
  code.cpu_devices = -1;
  CHECK_THROWS_AS(am::resolve_options(code, {}, fake_env({})), am::value_error);
}

TEST_CASE("a misspelt --am- flag is refused with the nearest flag, the program's own arguments are left alone",
          "[options]") {
  CHECK_THROWS_WITH(am::resolve_options({}, {"--am-cpu-device=3"}, fake_env({})),
                    "unknown runtime flag --am-cpu-device (did you mean --am-cpu-devices?)");
  CHECK_THROWS_WITH(am::resolve_options({}, {"--am-use-gpus", "0"}, fake_env({})),
                    "unknown runtime flag --am-use-gpus (did you mean --am-gpus?)");
  CHECK_THROWS_WITH(am::resolve_options({}, {"--am-zzzzzzzzzzzzzzzzzzzzzz"}, fake_env({})),
                    "unknown runtime flag --am-zzzzzzzzzzzzzzzzzzzzzz (the runtime's flags are listed in "
                    "doc/runtime.md)");
  CHECK_THROWS_AS(am::resolve_options({}, {"--am-"}, fake_env({})), am::value_error);
  // A known flag's value is its own even when it starts with --am-; a `--` ends the runtime's flags.
  CHECK(am::resolve_options({}, {"--am-trace", "--am-x.json"}, fake_env({})).trace == "--am-x.json");
  auto o = am::resolve_options({}, {"--steps", "3", "--am-cpu-devices=2", "--", "--am-whatever"}, fake_env({}));
  CHECK(o.cpu_devices == 2);
}

TEST_CASE("closest_name suggests only near names", "[options]") {
  CHECK(am::detail::edit_distance("", "abc") == 3);
  CHECK(am::detail::edit_distance("kitten", "sitting") == 3);
  CHECK(am::detail::edit_distance("same", "same") == 0);
  CHECK(am::detail::closest_name("lanch", {"info", "launch", "worker"}) == "launch");
  CHECK(am::detail::closest_name("xyzzy", {"info", "launch", "worker"}).empty());
  CHECK(am::detail::closest_name("anything", {}).empty());
}
