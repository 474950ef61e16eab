// The single-controller wire format (devices/remote/remote_wire.hpp): every request kind and reply
// survives encoding, error kinds come back as the same exception, and malformed input (every
// truncation, random bytes, oversized counts, bad programs) is refused with am::value_error.
#include "actormesh/actors/errors.hpp"
#include "devices/remote/remote_wire.hpp"

#include <catch2/catch.hpp>

#include <random>

namespace {

using namespace am::detail::remote;

std::shared_ptr<const am::program> sample_program() {
  am::program_builder b("sample");
  auto x = b.parameter({am::dtype::float32, {4, 2}});
  auto y = b.parameter({am::dtype::float32, {4, 2}});
  auto s = b.binary(am::opcode::add, x, y);
  b.output(b.reduce(am::opcode::reduce_sum, s, {0}));
  b.output(b.binary(am::opcode::multiply, s, b.constant(2.5, {am::dtype::float32, {4, 2}})));
  return b.build();
}

request sample_execute() {
  request q;
  q.kind = request_kind::execute;
  q.caller = 77;
  q.device = 5;
  q.code = sample_program();
  q.inputs = {10, 11};
  q.outputs = {12, 13};
  return q;
}

} // namespace

TEST_CASE("every request kind survives encoding", "[unit][remote]") {
  auto q = sample_execute();
  auto back = decode_request(encode(q));
  CHECK(back.kind == request_kind::execute);
  CHECK(back.caller == 77);
  CHECK(back.device == 5);
  CHECK(back.inputs == q.inputs);
  CHECK(back.outputs == q.outputs);
  REQUIRE(back.code);
  CHECK(am::to_string(*back.code) == am::to_string(*q.code));

  request up;
  up.kind = request_kind::upload;
  up.device = 3;
  up.type = {am::dtype::int32, {2, 3}};
  up.bytes.assign(24, 'x');
  up.outputs = {9};
  auto up_back = decode_request(encode(up));
  CHECK(up_back.type == up.type);
  CHECK(up_back.bytes == up.bytes);

  request send;
  send.kind = request_kind::send;
  send.device = 2;
  send.inputs = {4};
  send.peer = 3;
  send.tag = 0xdeadbeef;
  auto send_back = decode_request(encode(send));
  CHECK(send_back.peer == 3);
  CHECK(send_back.tag == 0xdeadbeefu);
}

TEST_CASE("a reply carries its error kind back", "[unit][remote]") {
  auto failure = error_reply(4, std::make_exception_ptr(am::process_failure_error("gone", 2, {4, 5})));
  auto back = decode_reply(encode(failure));
  CHECK(back.id == 4);
  try {
    std::rethrow_exception(error_of(back));
  } catch (const am::process_failure_error& e) {
    CHECK(std::string(e.what()) == "gone");
    CHECK(e.process() == 2);
    CHECK(e.failed_devices() == std::vector<int>{4, 5});
  }
  CHECK_THROWS_AS(std::rethrow_exception(error_of(decode_reply(encode(
                    error_reply(1, std::make_exception_ptr(am::out_of_memory_error("oom"))))))),
                  am::out_of_memory_error);
  CHECK_THROWS_AS(std::rethrow_exception(error_of(decode_reply(encode(
                    error_reply(1, std::make_exception_ptr(am::value_error("bad"))))))),
                  am::value_error);
  reply ok;
  ok.id = 8;
  ok.bytes = "abc";
  CHECK(error_of(decode_reply(encode(ok))) == nullptr);
  CHECK(decode_reply(encode(ok)).bytes == "abc");
}

TEST_CASE("every truncation of a request and trailing bytes are refused", "[unit][remote]") {
  auto bytes = encode(sample_execute());
  for (std::size_t n = 0; n < bytes.size(); ++n)
    CHECK_THROWS_AS(decode_request(bytes.substr(0, n)), am::value_error);
  CHECK_THROWS_AS(decode_request(bytes + "x"), am::value_error);
  auto answer = encode(error_reply(3, std::make_exception_ptr(am::runtime_error("x"))));
  for (std::size_t n = 0; n < answer.size(); ++n)
    CHECK_THROWS_AS(decode_reply(answer.substr(0, n)), am::value_error);
}

TEST_CASE("random bytes never crash the decoder", "[unit][remote]") {
  std::mt19937 rng(1234);
  auto valid = encode(sample_execute());
  int refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = valid;
    // flip a few bytes of a valid request, or make up bytes altogether
    if (round % 3 == 0) {
      bytes.assign(static_cast<std::size_t>(rng() % 200), '\0');
      for (auto& c : bytes)
        c = static_cast<char>(rng());
    } else {
      for (int k = 0; k < 1 + round % 4; ++k)
        bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    try {
      decode_request(bytes);
    } catch (const am::value_error&) {
      ++refused;
    }
  }
  CHECK(refused > 2000);
}

TEST_CASE("requests that do not fit their kind or their limits are refused", "[unit][remote]") {
  auto q = sample_execute();
  q.inputs = {1}; // the program takes two
  CHECK_THROWS_WITH(decode_request(encode(q)), Catch::Contains("inputs do not match"));
  q = sample_execute();
  q.outputs = {1};
  CHECK_THROWS_WITH(decode_request(encode(q)), Catch::Contains("outputs do not match"));
  request up;
  up.kind = request_kind::upload;
  up.type = {am::dtype::float32, {4}};
  up.bytes = "123"; // 3 bytes for 16
  up.outputs = {1};
  CHECK_THROWS_WITH(decode_request(encode(up)), Catch::Contains("bytes do not match"));
  up.type = {am::dtype::float32, {1LL << 40, 1LL << 40}}; // past int64 bytes
  CHECK_THROWS_AS(decode_request(encode(up)), am::value_error);
  up.type = {am::dtype::float32, {-4}};
  CHECK_THROWS_WITH(decode_request(encode(up)), Catch::Contains("negative dimension"));
  // A program whose operand points forward, and one with a parameter number past its length.
  auto p = std::make_shared<am::program>(*sample_program());
  p->code[2].operands = {0, 5};
  q = sample_execute();
  q.code = p;
  CHECK_THROWS_WITH(decode_request(encode(q)), Catch::Contains("is not an earlier instruction"));
  p = std::make_shared<am::program>(*sample_program());
  p->code[0].index = 1LL << 60;
  q.code = p;
  CHECK_THROWS_WITH(decode_request(encode(q)), Catch::Contains("parameter number"));
}

TEST_CASE("a worker decodes a program once and keeps the most recent ones", "[unit][remote]") {
  program_cache cache(2);
  auto bytes = encode_program(*sample_program());
  auto first = cache.get(bytes);
  CHECK(cache.get(bytes) == first); // the same object: the device compiles it once
  am::program_builder b("other");
  b.output(b.unary(am::opcode::neg, b.parameter({am::dtype::float32, {3}})));
  auto other = encode_program(*b.build());
  am::program_builder c("third");
  c.output(c.unary(am::opcode::abs, c.parameter({am::dtype::float32, {3}})));
  auto third = encode_program(*c.build());
  CHECK(cache.get(other) != first);
  cache.get(third); // over capacity: the least recently used (sample) goes
  CHECK(cache.get(bytes) != first);
  CHECK_THROWS_AS(cache.get(bytes.substr(0, bytes.size() / 2)), am::value_error); // refused, not kept
  auto q = sample_execute();
  q.program_bytes = bytes;
  auto back = decode_request(encode(q), &cache);
  CHECK(back.code == cache.get(bytes));
}
