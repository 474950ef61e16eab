/// One user actor's queue of tasks: an intrusive list that any thread pushes to and the actor's
/// thread takes from in batches. Only a push that finds the actor idle sends it a CAF message (a
/// wake-up), so a caller that sends faster than the actor runs pays a compare-and-swap per message
/// instead of CAF's mailbox element and enqueue (the device lanes' outboxes do the same per caller).
/// Each thread's pushes are taken in the order it made them. Internal.
#pragma once

#include "actormesh/actor_mesh/detail/actor_task.hpp"

#include <atomic>

namespace am::detail {

class task_inbox {
public:
  task_inbox() = default;
  ~task_inbox() { drop_all(); }
  task_inbox(const task_inbox&) = delete;
  task_inbox& operator=(const task_inbox&) = delete;

  /// Queues `task` (the inbox owns it now). True when the actor was idle: the caller wakes it.
  /// On a closed inbox the task is deleted at once (failing its call) and the answer is false.
  bool push(task_ptr task) noexcept {
    actor_task* t = task.release();
    actor_task* old = head_.load(std::memory_order_relaxed);
    do {
      if (old == closed()) {
        delete t; // nobody will take it
        return false;
      }
      t->next_in_inbox = old == idle() ? nullptr : old;
    } while (!head_.compare_exchange_weak(old, t, std::memory_order_release, std::memory_order_relaxed));
    return old == idle();
  }

  /// Every task queued now, oldest first (null when none); the caller owns them and must run or
  /// delete each. The actor's thread only.
  actor_task* take() noexcept {
    actor_task* head = head_.load(std::memory_order_acquire);
    if (head == idle() || head == closed())
      return nullptr;
    actor_task* newest = head_.exchange(nullptr, std::memory_order_acquire); // only the actor sets idle or closed
    actor_task* oldest = nullptr;
    while (newest) {
      actor_task* next = newest->next_in_inbox;
      newest->next_in_inbox = oldest;
      oldest = newest;
      newest = next;
    }
    return oldest;
  }

  /// After a batch: marks the actor idle when nothing more came (true); false when tasks are
  /// waiting (take them). The actor's thread only.
  bool rest() noexcept {
    actor_task* expected = nullptr;
    if (head_.compare_exchange_strong(expected, idle(), std::memory_order_acq_rel))
      return true;
    return expected == idle() || expected == closed();
  }

  /// The actor is gone for good: deletes every queued task (each fails its call), and every later
  /// push deletes its task at once. Without it, a push after the actor's last take would queue a
  /// task nobody takes (its caller waiting until the inbox itself goes). The actor's thread only,
  /// as it exits.
  void close() noexcept {
    actor_task* list = head_.exchange(closed(), std::memory_order_acq_rel);
    if (list == idle() || list == closed())
      return;
    actor_task* oldest = nullptr; // deleted oldest first, as drop_all does
    while (list) {
      actor_task* next = list->next_in_inbox;
      list->next_in_inbox = oldest;
      oldest = list;
      list = next;
    }
    while (oldest) {
      actor_task* next = oldest->next_in_inbox;
      delete oldest;
      oldest = next;
    }
  }

  /// Deletes every queued task (each fails its call): the actor is gone.
  void drop_all() noexcept {
    actor_task* list = take();
    while (list) {
      actor_task* next = list->next_in_inbox;
      delete list;
      list = next;
    }
  }

private:
  /// The mark of an idle actor (no task queued, no wake-up on its way).
  static actor_task* idle() noexcept { return reinterpret_cast<actor_task*>(&idle_mark); }
  /// The mark of an inbox whose actor is gone (close()).
  static actor_task* closed() noexcept { return reinterpret_cast<actor_task*>(&closed_mark); }
  static inline char idle_mark = 0;
  static inline char closed_mark = 0;

  std::atomic<actor_task*> head_{idle()};
};

} // namespace am::detail
