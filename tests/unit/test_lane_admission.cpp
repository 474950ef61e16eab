// The receiver side of ordered lanes: calls released in each caller's order whatever the arrival.
#include "actormesh/actors/lane.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <thread>

TEST_CASE("calls arriving out of order are released in sequence per caller", "[lane]") {
  am::in_order_admission<int> admission;
  std::vector<std::pair<am::caller_id, int>> ran;
  auto run = [&](am::caller_id c) { return [&ran, c](int& v) { ran.emplace_back(c, v); }; };
  admission.offer({1, 2}, 12, run(1));
  admission.offer({2, 0}, 20, run(2));
  admission.offer({1, 1}, 11, run(1));
  CHECK(admission.buffered() == 2);
  admission.offer({1, 0}, 10, run(1));
  CHECK(admission.buffered() == 0);
  std::vector<std::pair<am::caller_id, int>> expected{{2, 20}, {1, 10}, {1, 11}, {1, 12}};
  CHECK(ran == expected);
  CHECK(admission.expected_seq(1) == 3);
}

TEST_CASE("a random shuffle of many callers' calls comes out in each caller's order", "[lane]") {
  std::vector<am::call_header> calls;
  for (am::caller_id c = 1; c <= 5; ++c)
    for (std::uint64_t s = 0; s < 200; ++s)
      calls.push_back({c, s});
  std::mt19937 rng(7);
  std::shuffle(calls.begin(), calls.end(), rng);
  am::in_order_admission<am::call_header> admission;
  std::map<am::caller_id, std::uint64_t> next;
  bool in_order = true;
  for (auto& h : calls)
    admission.offer(h, h, [&](am::call_header& got) {
      if (got.seq != next[got.caller]++)
        in_order = false;
    });
  CHECK(in_order);
  CHECK(admission.buffered() == 0);
  for (auto& [c, n] : next)
    CHECK(n == 200);
}

TEST_CASE("each thread is its own caller and numbers calls per receiver", "[lane]") {
  auto key_a = am::new_receiver_key();
  auto key_b = am::new_receiver_key();
  CHECK(key_a != key_b);
  auto h0 = am::next_call_header(key_a);
  auto h1 = am::next_call_header(key_a);
  auto g0 = am::next_call_header(key_b);
  CHECK(h0.caller == am::this_caller());
  CHECK(h0.seq == 0);
  CHECK(h1.seq == 1);
  CHECK(g0.seq == 0);
  am::caller_id other = 0;
  std::uint64_t other_seq = 99;
  std::thread t([&] {
    other = am::this_caller();
    other_seq = am::next_call_header(key_a).seq;
  });
  t.join();
  CHECK(other != am::this_caller());
  CHECK(other_seq == 0);
}
