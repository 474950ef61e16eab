// An actor's task inbox (actor_mesh/detail/task_inbox.hpp): only the push that finds it idle asks
// for a wake-up; the consumer takes every producer's tasks in the order that producer pushed them;
// rest() goes idle only when nothing is waiting; dropped tasks are destroyed.
#include <actormesh.hpp>

#include "actor_mesh/detail/task_inbox.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

namespace {

struct numbered_task final : am::detail::actor_task {
  numbered_task(int producer, int k, std::atomic<int>* destroyed) : producer(producer), k(k), destroyed(destroyed) {}
  ~numbered_task() override {
    if (destroyed)
      ++*destroyed;
  }
  std::exception_ptr run(void*) noexcept override { return nullptr; }
  void refuse(const std::exception_ptr&) noexcept override {}
  int producer, k;
  std::atomic<int>* destroyed;
};

} // namespace

TEST_CASE("an idle inbox asks for one wake-up, and goes idle only when empty", "[actor_mesh][inbox]") {
  am::detail::task_inbox inbox;
  CHECK(inbox.take() == nullptr);
  CHECK(inbox.push(std::make_unique<numbered_task>(0, 0, nullptr))); // idle: wake it
  CHECK_FALSE(inbox.push(std::make_unique<numbered_task>(0, 1, nullptr))); // a wake-up is on its way
  auto* batch = inbox.take();
  REQUIRE(batch != nullptr);
  CHECK(static_cast<numbered_task*>(batch)->k == 0);
  CHECK(static_cast<numbered_task*>(batch->next_in_inbox)->k == 1);
  CHECK(batch->next_in_inbox->next_in_inbox == nullptr);
  delete batch->next_in_inbox;
  delete batch;
  CHECK_FALSE(inbox.push(std::make_unique<numbered_task>(0, 2, nullptr))); // still busy: no wake-up
  CHECK_FALSE(inbox.rest());                                              // something waits
  delete inbox.take();
  CHECK(inbox.rest());
  CHECK(inbox.rest()); // idle stays idle
  CHECK(inbox.push(std::make_unique<numbered_task>(0, 3, nullptr)));
}

TEST_CASE("tasks left in an inbox are destroyed with it", "[actor_mesh][inbox]") {
  std::atomic<int> destroyed{0};
  {
    am::detail::task_inbox inbox;
    for (int k = 0; k < 5; ++k)
      inbox.push(std::make_unique<numbered_task>(0, k, &destroyed));
  }
  CHECK(destroyed == 5);
}

TEST_CASE("a closed inbox deletes what it holds and every task pushed later, asking for no wake-up",
          "[actor_mesh][inbox]") {
  std::atomic<int> destroyed{0};
  am::detail::task_inbox inbox;
  // The actor took its last batch (not idle: a push now would count on it to take more) ...
  inbox.push(std::make_unique<numbered_task>(0, 0, &destroyed));
  delete inbox.take();
  CHECK(destroyed == 1);
  inbox.push(std::make_unique<numbered_task>(0, 1, &destroyed));
  // ... and exits: what is queued goes, and so does every later push, from any thread.
  inbox.close();
  CHECK(destroyed == 2);
  CHECK_FALSE(inbox.push(std::make_unique<numbered_task>(0, 2, &destroyed)));
  CHECK(destroyed == 3);
  std::atomic<int> wakes{0}; // counted here, checked on this thread (Catch's checks are not thread-safe)
  std::vector<std::thread> producers;
  for (int p = 0; p < 4; ++p)
    producers.emplace_back([&inbox, &destroyed, &wakes, p] {
      for (int k = 0; k < 100; ++k)
        wakes += inbox.push(std::make_unique<numbered_task>(p, k, &destroyed)) ? 1 : 0;
    });
  for (auto& t : producers)
    t.join();
  CHECK(wakes == 0);
  CHECK(destroyed == 403);
  CHECK(inbox.take() == nullptr);
  CHECK(inbox.rest());
}

TEST_CASE("a close racing pushes from other threads loses no task", "[actor_mesh][inbox]") {
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> destroyed{0}, taken{0};
    {
      am::detail::task_inbox inbox;
      std::vector<std::thread> producers;
      for (int p = 0; p < 4; ++p)
        producers.emplace_back([&inbox, &destroyed, p] {
          for (int k = 0; k < 50; ++k)
            inbox.push(std::make_unique<numbered_task>(p, k, &destroyed));
        });
      for (int i = 0; i < 10; ++i) { // the actor takes some, then exits
        auto* batch = inbox.take();
        while (batch) {
          auto* next = batch->next_in_inbox;
          delete batch;
          ++taken;
          batch = next;
        }
      }
      inbox.close();
      for (auto& t : producers)
        t.join();
    }
    CHECK(destroyed == 200); // every task deleted once: taken, dropped by close, or refused after it
  }
}

TEST_CASE("many producers: every task is taken once, each producer's in order, with a wake-up only when idle",
          "[actor_mesh][inbox]") {
  for (int producers : {1, 4, 16}) {
    am::detail::task_inbox inbox;
    std::atomic<int> wakes{0}, destroyed{0};
    const int per = 20000 / producers;
    std::vector<std::thread> threads;
    std::atomic<bool> done_pushing{false};
    std::vector<int> next(static_cast<std::size_t>(producers), 0);
    long taken = 0;
    bool in_order = true;
    std::thread consumer([&] {
      while (true) {
        bool finished = done_pushing.load();
        while (auto* batch = inbox.take()) {
          while (batch) {
            auto* t = static_cast<numbered_task*>(batch);
            batch = batch->next_in_inbox;
            in_order = in_order && t->k == next[static_cast<std::size_t>(t->producer)];
            next[static_cast<std::size_t>(t->producer)] = t->k + 1;
            ++taken;
            delete t;
          }
        }
        inbox.rest();
        if (finished && taken == static_cast<long>(producers) * per)
          break;
        std::this_thread::yield();
      }
    });
    for (int p = 0; p < producers; ++p)
      threads.emplace_back([&, p] {
        for (int k = 0; k < per; ++k)
          wakes += inbox.push(std::make_unique<numbered_task>(p, k, &destroyed)) ? 1 : 0;
      });
    for (auto& t : threads)
      t.join();
    done_pushing = true;
    consumer.join();
    INFO(producers << " producers");
    CHECK(in_order);
    CHECK(taken == static_cast<long>(producers) * per);
    CHECK(destroyed == producers * per);
    CHECK(wakes >= 1);
    CHECK(wakes <= producers * per);
  }
}
