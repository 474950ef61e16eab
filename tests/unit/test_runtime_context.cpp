// The runtime as the floors above devices/ see it (devices/runtime_context.hpp): its answers about
// this process and its devices, per-runtime services looked up by typed key, and what a lookup says
// once the runtime has stopped.
#include "support/arrays.hpp"

#include "devices/runtime_context.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace {

/// A service type two keys share: each key must still get a service of its own.
struct counter {
  std::atomic<int> value{0};
};

const am::detail::service_key<counter> first_counter{"first test counter"};
const am::detail::service_key<counter> second_counter{"second test counter"};

} // namespace

TEST_CASE("runtime context: this process, its devices and the cluster of one", "[runtime_context]") {
  am::runtime rt(am::testing::cpus_only(3));
  auto context = am::detail::current_context();
  CHECK(context->process_index() == 0);
  CHECK(context->config().num_processes == 1);
  CHECK(context->cluster().process_count() == 1);
  CHECK(context->all_devices() == am::devices());
  CHECK(context->drives_every_device());
  CHECK(context->worker_hosts() == nullptr);
  for (auto& d : am::devices()) {
    CHECK(context->drives(d));
    CHECK(context->reach(d) == am::detail::device_reach::here);
  }
  CHECK(context->device_memory_stats(0).bytes_limit == rt.config().cpu_memory_limit);
  // A made-up descriptor is refused, as a call to it would be.
  CHECK_THROWS_AS(context->check_known(am::device{1, 0, am::platform::cuda, 0}), am::value_error);
  CHECK_THROWS_AS(context->reach(am::device{1, 0, am::platform::cuda, 0}), am::value_error);
}

TEST_CASE("runtime context: a service per key, made once, even when many threads ask at once", "[runtime_context]") {
  am::runtime rt(am::testing::cpus_only(1));
  auto context = am::detail::current_context();
  std::atomic<int> made{0};
  auto make = [&made] {
    made.fetch_add(1);
    return std::make_shared<counter>();
  };
  std::vector<std::shared_ptr<counter>> seen(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < seen.size(); ++t)
    threads.emplace_back([&, t] { seen[t] = context->service(first_counter, make); });
  for (auto& t : threads)
    t.join();
  CHECK(made.load() == 1);
  for (auto& s : seen)
    CHECK(s == seen[0]);
  // The same type under another key is another service.
  auto second = context->service(second_counter, make);
  CHECK(made.load() == 2);
  CHECK(second != seen[0]);
  CHECK(context->service(second_counter, make) == second);
}

TEST_CASE("runtime context: after stop a new service is refused, naming it", "[runtime_context]") {
  am::runtime rt(am::testing::cpus_only(1));
  auto context = am::detail::current_context();
  auto kept = context->service(first_counter, [] { return std::make_shared<counter>(); });
  kept->value = 7;
  rt.stop();
  CHECK_THROWS_WITH(context->service(second_counter, [] { return std::make_shared<counter>(); }),
                    Catch::Contains("has stopped") && Catch::Contains("second test counter"));
  // A service made before the stop outlives it in its holders' hands.
  CHECK(kept->value.load() == 7);
}
