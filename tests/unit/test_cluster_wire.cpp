// The cluster's wire formats: what a process sends round-trips, and malformed or oversized input
// from the network is refused with am::value_error (never a crash or an unbounded allocation).
#include "cluster/cluster_messages.hpp"
#include "cluster/membership.hpp"
#include "actormesh/actors/wire_codec.hpp"
#include "actormesh/actors/errors.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace am::detail;

namespace {

join_request sample_join() {
  join_request r;
  r.version = "0.1.0";
  r.process = 2;
  r.process_count = 4;
  r.host = "node3";
  r.devices = {{0, 0, am::platform::cpu, 0}, {0, 0, am::platform::cpu, 1}, {0, 0, am::platform::cuda, 0}};
  return r;
}

cluster_directory sample_directory() {
  cluster_directory d;
  d.hosts = {"a", "b"};
  d.devices = {{0, 0, am::platform::cpu, 0}, {1, 0, am::platform::cpu, 1}, {2, 1, am::platform::cpu, 0}};
  return d;
}

/// Runs `decode` on `bytes`: it must either succeed or throw am::value_error.
template <class F>
bool refused_cleanly(F&& decode, const std::string& bytes) {
  try {
    decode(bytes);
    return false;
  } catch (const am::value_error&) {
    return true;
  }
}

} // namespace

TEST_CASE("join requests, directories, replies and collective checks round-trip", "[unit][cluster]") {
  auto j = decode_join_request(encode(sample_join()));
  CHECK(j.version == "0.1.0");
  CHECK(j.process == 2);
  CHECK(j.process_count == 4);
  CHECK(j.host == "node3");
  REQUIRE(j.devices.size() == 3);
  CHECK(j.devices[2].platform == am::platform::cuda);

  auto d = decode_directory(encode(sample_directory()));
  CHECK(d.devices.size() == 3);
  CHECK(d.device_ids_of(0) == std::vector<int>{0, 1});
  CHECK(describe_process(d, 0) == "process 0 (host a, devices 0-1)");
  CHECK(describe_process(d, 1) == "process 1 (host b, device 2)");

  auto r = decode_reply(encode(cluster_reply{reply_code::desync, -1, "they differ", "v"}));
  CHECK(r.code == reply_code::desync);
  CHECK(r.message == "they differ");
  CHECK(r.value == "v");

  auto c = decode_collective_check(encode(collective_check{"world", 7, {0, 1, 2}, "all_gather int32[2]", 1500}));
  CHECK(c.communicator == "world");
  CHECK(c.step == 7);
  CHECK(c.participants == std::vector<int>{0, 1, 2});
  CHECK(c.timeout_ms == 1500);
  CHECK(join_list({1, 3, 4}) == "1, 3 and 4");

  auto f = decode_failures(encode(std::vector<declared_failure>{{3, "Process 3 failed: x"}, {4095, "y"}}));
  REQUIRE(f.size() == 2);
  CHECK(f[0].process == 3);
  CHECK(f[0].notice == "Process 3 failed: x");
  CHECK(f[1].process == 4095);
}

TEST_CASE("a join request of another protocol keeps its version for the refusal", "[unit][cluster]") {
  wire_writer w;
  w.u32(wire_protocol_version + 1);
  w.str("9.9.9");
  w.str("whatever the future format holds");
  auto j = decode_join_request(w.take());
  CHECK(j.protocol == wire_protocol_version + 1);
  CHECK(j.version == "9.9.9");
}

TEST_CASE("out-of-range fields and oversized counts are refused", "[unit][cluster]") {
  auto bad_index = sample_join();
  bad_index.process = -1;
  CHECK(refused_cleanly(decode_join_request, encode(bad_index)));
  auto bad_count = sample_join();
  bad_count.process_count = max_cluster_processes + 1;
  CHECK(refused_cleanly(decode_join_request, encode(bad_count)));

  // A string claiming 2^60 bytes, a list claiming 2^40 entries: refused before any allocation.
  wire_writer huge_string;
  huge_string.u64(1ull << 60);
  CHECK(refused_cleanly([](const std::string& b) { wire_reader(b).str(); }, huge_string.take()));
  wire_writer huge_list;
  huge_list.u64(1ull << 40);
  CHECK(refused_cleanly([](const std::string& b) { wire_reader(b).i32_list(); }, huge_list.take()));

  // A directory whose ids skip, or whose device names a process without a host.
  auto skipped = sample_directory();
  skipped.devices[1].id = 5;
  CHECK(refused_cleanly(decode_directory, encode(skipped)));
  auto orphan = sample_directory();
  orphan.devices[2].process_index = 7;
  CHECK(refused_cleanly(decode_directory, encode(orphan)));

  // Trailing bytes and truncation.
  CHECK(refused_cleanly(decode_reply, encode(cluster_reply{}) + "x"));
  auto full = encode(sample_join());
  for (std::size_t cut = 0; cut < full.size(); ++cut)
    CHECK(refused_cleanly(decode_join_request, full.substr(0, cut)));
  CHECK(refused_cleanly(decode_collective_check,
                        encode(collective_check{"c", 0, {0, max_cluster_processes}, "s", 1})));

  // Failure notices: none, a process out of range, a count beyond the cluster, a notice too long.
  CHECK(refused_cleanly(decode_failures, encode(std::vector<declared_failure>{})));
  CHECK(refused_cleanly(decode_failures, encode(std::vector<declared_failure>{{max_cluster_processes, "n"}})));
  CHECK(refused_cleanly(decode_failures, encode(std::vector<declared_failure>{{-1, "n"}})));
  wire_writer many;
  many.u32(static_cast<std::uint32_t>(max_cluster_processes) + 1);
  CHECK(refused_cleanly(decode_failures, many.take()));
  CHECK(refused_cleanly(decode_failures, encode(std::vector<declared_failure>{{1, std::string(5000, 'n')}})));
}

TEST_CASE("random bytes never crash a decoder", "[unit][cluster]") {
  std::mt19937_64 rng(20261201);
  auto seeds = std::vector<std::string>{encode(sample_join()), encode(sample_directory()),
                                        encode(cluster_reply{reply_code::ok, 3, "m", "v"}),
                                        encode(collective_check{"w", 1, {0, 1}, "sig", 10}),
                                        encode(std::vector<declared_failure>{{1, "one"}, {2, "two"}})};
  int refused = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string bytes = seeds[static_cast<std::size_t>(round) % seeds.size()];
    int flips = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < flips && !bytes.empty(); ++k)
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0)
      bytes.resize(rng() % (bytes.size() + 1));
    for (auto decode : {+[](const std::string& b) { decode_join_request(b); },
                        +[](const std::string& b) { decode_directory(b); },
                        +[](const std::string& b) { decode_reply(b); },
                        +[](const std::string& b) { decode_collective_check(b); },
                        +[](const std::string& b) { decode_failures(b); }})
      refused += refused_cleanly(decode, bytes) ? 1 : 0;
  }
  CHECK(refused > 0);
}
