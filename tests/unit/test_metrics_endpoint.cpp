// The Prometheus endpoint (devices/metrics_endpoint.hpp, --am-metrics-port): scraped over HTTP, its
// counters match the work done and never move runtime_stats()' rates; strangers' garbage, a huge
// request, a silent connection and a wrong path leave it serving; many scrapers while the runtime
// stops end cleanly; a port in use is refused by name; the options' checks.
#include "support/cpu_options.hpp"
#include "support/loopback_http.hpp"
#include "support/process_group.hpp"
#include "support/programs.hpp"

#include "actormesh.hpp"
#include "actormesh/actors/errors.hpp"
#include "devices/metrics_endpoint.hpp"
#include "devices/runtime_context.hpp"

#include <catch2/catch.hpp>


#include <atomic>
#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

using am::testing::http_get;
using am::testing::loopback_socket;

namespace {

/// The value of the sample `name{labels}` in a Prometheus text reply, or -1 when absent.
double sample(const std::string& text, const std::string& name, const std::string& labels) {
  const std::regex line("^" + name + "\\{([^}]*)\\} ([-0-9.e+]+)$", std::regex::multiline);
  for (std::sregex_iterator it(text.begin(), text.end(), line), end; it != end; ++it)
    if ((*it)[1].str().find(labels) != std::string::npos)
      return std::stod((*it)[2].str());
  return -1;
}

/// Runs `steps` step programs on `d` and waits for them: steps + 2 calls (upload, fetch).
void run_steps(const am::device& d, int steps) {
  am::value_type t{am::dtype::int64, {4}};
  auto x = am::upload(d, am::testing::to_bytes(std::vector<std::int64_t>{1, 1, 1, 1}), t);
  for (int i = 0; i < steps; ++i)
    x = am::execute(d, am::testing::step_program(1), {x})[0];
  am::fetch(d, x).get(30s);
}

am::options metrics_options(int devices, int port) {
  auto o = am::test::cpu_options(devices);
  o.metrics_port = port;
  return o;
}

} // namespace

TEST_CASE("metrics: a scrape over HTTP gives the devices' calls, memory and the transfers", "[unit][metrics]") {
  const int port = am::testing::free_loopback_port();
  am::runtime rt(metrics_options(2, port));
  const auto devices = am::devices();
  run_steps(devices[1], 10);
  auto reply = http_get(port);
  INFO(reply.substr(0, 3000));
  CHECK(reply.rfind("HTTP/1.1 200", 0) == 0);
  CHECK_THAT(reply, Catch::Contains("# TYPE actormesh_device_calls_done_total counter"));
  CHECK_THAT(reply, Catch::Contains("# TYPE actormesh_device_queue_depth gauge"));
  CHECK(sample(reply, "actormesh_device_calls_done_total", "device=\"CpuDevice(id=1)\"") == 12);
  CHECK(sample(reply, "actormesh_device_calls_queued_total", "device_id=\"1\"") == 12);
  CHECK(sample(reply, "actormesh_device_calls_done_total", "device=\"CpuDevice(id=0)\"") == 0);
  CHECK(sample(reply, "actormesh_device_queue_depth", "device_id=\"1\"") == 0);
  CHECK(sample(reply, "actormesh_device_allocations_total", "device_id=\"1\"") >= 1);
  CHECK(sample(reply, "actormesh_device_memory_peak_bytes", "device_id=\"1\"") >= 32);
  CHECK(sample(reply, "actormesh_device_calls_done_total", "process=\"0\"") >= 0);
  CHECK_THAT(reply, Catch::Contains("actormesh_transfers_total{process=\"0\"} 0"));
  CHECK_THAT(reply, Catch::Contains("actormesh_uptime_seconds{process=\"0\"}"));
  // What the endpoint serves is what metrics_text renders.
  CHECK_THAT(am::detail::metrics_text(*am::detail::current_context()),
             Catch::Contains("actormesh_device_calls_done_total{process=\"0\",device=\"CpuDevice(id=1)\",device_id=\"1\"} 12"));
}

TEST_CASE("metrics: scrapes never move the window of runtime_stats' rates", "[unit][metrics]") {
  const int port = am::testing::free_loopback_port();
  am::runtime rt(metrics_options(1, port));
  auto d = am::devices()[0];
  am::runtime_stats(); // opens the window
  run_steps(d, 20);
  std::this_thread::sleep_for(20ms);
  for (int i = 0; i < 5; ++i)
    http_get(port);
  auto s = am::runtime_stats();
  // The window is the whole interval since the first runtime_stats(), not since the last scrape.
  CHECK(s.interval_seconds >= 0.02);
  CHECK(s.devices[0].calls_per_second * s.interval_seconds == Approx(22).epsilon(0.01));
}

TEST_CASE("metrics: garbage, a huge request, a silent connection and a wrong path leave the endpoint serving",
          "[unit][metrics]") {
  const int port = am::testing::free_loopback_port();
  am::runtime rt(metrics_options(1, port));
  {
    loopback_socket garbage(port);
    REQUIRE(garbage.connected());
    static constexpr char tls_hello_then_text[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not http at all\r\n\r\n";
    garbage.send_all(std::string(tls_hello_then_text, sizeof tls_hello_then_text - 1)); // NULs included
    garbage.read_all(); // an error reply or a close, never a hang past the timeout
  }
  {
    loopback_socket huge(port);
    REQUIRE(huge.connected());
    huge.send_all("GET /metrics HTTP/1.1\r\nX-Filler: " + std::string(1 << 20, 'a') + "\r\n\r\n");
    auto reply = huge.read_all();
    CHECK(reply.find("200 OK") == std::string::npos); // refused, not served
  }
  loopback_socket silent(port); // a stranger that connects and says nothing, held open meanwhile
  REQUIRE(silent.connected());
  CHECK(http_get(port, "/other").find("404") != std::string::npos);
  auto reply = http_get(port);
  CHECK(reply.rfind("HTTP/1.1 200", 0) == 0);
  CHECK_THAT(reply, Catch::Contains("actormesh_device_calls_done_total"));
}

TEST_CASE("metrics: many scrapers while the runtime stops end cleanly, and the port is free after", "[unit][metrics]") {
  const int port = am::testing::free_loopback_port();
  auto rt = std::make_unique<am::runtime>(metrics_options(2, port));
  std::atomic<bool> stop{false};
  std::atomic<int> served{0};
  std::vector<std::thread> scrapers;
  for (int t = 0; t < 4; ++t)
    scrapers.emplace_back([&] {
      const auto until = std::chrono::steady_clock::now() + 20s;
      while (!stop.load() && std::chrono::steady_clock::now() < until) {
        loopback_socket s(port);
        if (!s.connected())
          continue; // stopped: nothing listens any more
        if (!s.send_all("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
          continue;
        if (s.read_all().rfind("HTTP/1.1 200", 0) == 0)
          served.fetch_add(1);
      }
    });
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (served.load() < 8 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(5ms);
  rt.reset(); // stops while scrapes are in flight
  stop.store(true);
  for (auto& t : scrapers)
    t.join();
  CHECK(served.load() >= 8);
  loopback_socket after(port);
  CHECK_FALSE(after.connected());
  // A new runtime takes the same port again.
  am::runtime again(metrics_options(1, port));
  CHECK(http_get(port).rfind("HTTP/1.1 200", 0) == 0);
}

TEST_CASE("metrics: a port in use is refused, naming the address", "[unit][metrics]") {
  const int port = am::testing::free_loopback_port();
  am::runtime first(metrics_options(1, port));
  CHECK_THROWS_WITH(am::detail::metrics_endpoint(*am::detail::current_context(), "127.0.0.1", port),
                    Catch::Contains("cannot listen on 127.0.0.1:" + std::to_string(port)));
  am::detail::metrics_endpoint any(*am::detail::current_context(), "127.0.0.1", 0);
  CHECK(any.port() > 0);
  CHECK(any.url() == "http://127.0.0.1:" + std::to_string(any.port()) + "/metrics");
  CHECK(http_get(any.port()).rfind("HTTP/1.1 200", 0) == 0);
}

TEST_CASE("metrics: the port options are checked", "[unit][metrics]") {
  auto resolve = [](std::map<std::string, std::string> env) {
    return am::resolve_options({}, {}, [env](const char* name) -> const char* {
      auto it = env.find(name);
      return it == env.end() ? nullptr : it->second.c_str();
    });
  };
  CHECK(resolve({}).metrics_port == -1);
  CHECK(resolve({{"AM_METRICS_PORT", "9400"}}).metrics_port == 9400);
  CHECK(resolve({{"AM_METRICS_PORT", "0"}}).metrics_port == 0);
  CHECK(resolve({{"AM_METRICS_PORT", "9400"}}).metrics_host == "127.0.0.1");
  CHECK(resolve({{"AM_METRICS_HOST", "0.0.0.0"}, {"AM_METRICS_PORT", "1"}}).metrics_host == "0.0.0.0");
  CHECK_THROWS_WITH(resolve({{"AM_METRICS_PORT", "70000"}}), Catch::Contains("AM_METRICS_PORT=70000 is not a port"));
  CHECK_THROWS_WITH(resolve({{"AM_METRICS_PORT", "http"}}), Catch::Contains("AM_METRICS_PORT"));
  CHECK_THROWS_WITH(resolve({{"AM_METRICS_PORT", "65535"}, {"AM_NUM_PROCESSES", "2"}, {"AM_COORDINATOR", "127.0.0.1:5000"}}),
                    Catch::Contains("leaves no port for process 1"));
  CHECK(am::detail::metrics_port_of(9400, 3) == 9403);
  CHECK(am::detail::metrics_port_of(0, 3) == 0);
}
