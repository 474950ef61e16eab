// The fingerprint every participant of a collective sends its peers ahead of the bytes
// (devices/collectives/collective_fingerprint.hpp): what it keeps of a signature, what it refuses
// to read, and the desync text built from the records of every participant.
#include "devices/collectives/collective_fingerprint.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

using am::detail::decode_fingerprint;
using am::detail::encode_fingerprint;
using am::detail::fingerprint_bytes;
using am::detail::fingerprint_disagreement;

namespace {

/// The records of several participants, back to back.
std::vector<std::byte> records_of(const std::vector<am::detail::fingerprint_record>& each) {
  std::vector<std::byte> out;
  for (auto& r : each)
    out.insert(out.end(), r.begin(), r.end());
  return out;
}

} // namespace

TEST_CASE("fingerprint: a record keeps the step and the signature", "[collectives][fingerprint]") {
  auto record = encode_fingerprint(12345678901ull, "all_reduce(sum) float32[1024]");
  auto decoded = decode_fingerprint(record.data());
  REQUIRE(decoded);
  CHECK(decoded->step == 12345678901ull);
  CHECK(decoded->signature == "all_reduce(sum) float32[1024]");
  auto empty = decode_fingerprint(encode_fingerprint(0, "").data());
  REQUIRE(empty);
  CHECK(empty->signature.empty());
}

TEST_CASE("fingerprint: long signatures that differ only past the cut still differ", "[collectives][fingerprint]") {
  const std::string stem(400, 'x');
  auto a = encode_fingerprint(1, stem + "a");
  auto b = encode_fingerprint(1, stem + "b");
  CHECK(std::memcmp(a.data(), b.data(), fingerprint_bytes) != 0);
  auto decoded = decode_fingerprint(a.data());
  REQUIRE(decoded);
  CHECK(decoded->signature.size() < fingerprint_bytes);
  CHECK(decoded->signature.find("... #") != std::string::npos);
  // The same long signature encodes alike on every process.
  auto again = encode_fingerprint(1, stem + "a");
  CHECK(std::memcmp(a.data(), again.data(), fingerprint_bytes) == 0);
}

TEST_CASE("fingerprint: garbage is not read as a record", "[collectives][fingerprint]") {
  std::vector<std::byte> zeros(fingerprint_bytes);
  CHECK_FALSE(decode_fingerprint(zeros.data()));
  auto record = encode_fingerprint(3, "broadcast int8[4] root=0");
  record[13] = std::byte{0xff}; // a length beyond the record
  record[14] = std::byte{0xff};
  CHECK_FALSE(decode_fingerprint(record.data()));
}

TEST_CASE("fingerprint: agreeing records say nothing, others name who issued what", "[collectives][fingerprint]") {
  auto same = records_of({encode_fingerprint(4, "all_gather int32[2]"), encode_fingerprint(4, "all_gather int32[2]")});
  CHECK(fingerprint_disagreement("Collective 4 of communicator 'c'", {0, 3}, same.data(), 1).empty());

  std::vector<std::byte> garbage(fingerprint_bytes, std::byte{0x5a});
  auto differ = records_of({encode_fingerprint(4, "all_gather int32[2]"), encode_fingerprint(4, "all_gather int32[3]"),
                            encode_fingerprint(5, "all_gather int32[2]")});
  differ.insert(differ.end(), garbage.begin(), garbage.end());
  const auto text = fingerprint_disagreement("Collective 4 of communicator 'c'", {0, 1, 2, 7}, differ.data(), 0,
                                             " over processes [0, 1, 2, 7]");
  CHECK(text == "Collective 4 of communicator 'c' differs between processes (desync): process 0 issued all_gather "
                "int32[2] over processes [0, 1, 2, 7]; process 1 issued all_gather int32[3] over processes [0, 1, 2, 7]; "
                "process 2 issued all_gather int32[2] over processes [0, 1, 2, 7] as step 5; process 7 issued a record "
                "that is not a collective's fingerprint");
}
