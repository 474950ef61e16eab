#include "actor_mesh/detail/actor_wire.hpp"

#include "actormesh/actor_mesh/actor_errors.hpp"
#include "actormesh/actor_mesh/detail/actor_task.hpp"
#include "actormesh/actors/wire_codec.hpp"

#include <functional>
#include <map>
#include <stdexcept>

namespace am::detail {

namespace {

constexpr std::size_t max_name = 4096; // mesh keys, endpoint names, type names

} // namespace

std::string encode_call(const actor_call& call) {
  wire_writer w;
  w.str(call.mesh);
  w.i32(call.rank);
  w.str(call.endpoint);
  w.u64(call.request);
  w.str(call.arguments);
  return w.take();
}

actor_call decode_call(std::string_view bytes) {
  wire_reader r(bytes);
  actor_call call;
  call.mesh = r.str(max_name);
  call.rank = r.i32_in(0, std::int32_t{1} << 30, "actor rank");
  call.endpoint = r.str(max_name);
  call.request = r.u64();
  call.arguments = r.str();
  r.finish();
  return call;
}

std::string encode_answer(const actor_answer& answer) {
  wire_writer w;
  w.u64(answer.request);
  w.u8(answer.ok ? 1 : 0);
  if (answer.ok) {
    w.str(answer.value);
  } else {
    w.str(answer.error_type);
    w.str(answer.error_text);
  }
  return w.take();
}

actor_answer decode_answer(std::string_view bytes) {
  wire_reader r(bytes);
  actor_answer answer;
  answer.request = r.u64();
  auto ok = r.u8();
  if (ok > 1)
    throw value_error("malformed cluster message: answer flag " + std::to_string(ok));
  answer.ok = ok == 1;
  if (answer.ok) {
    answer.value = r.str();
  } else {
    answer.error_type = r.str(max_name);
    answer.error_text = r.str();
  }
  r.finish();
  return answer;
}

actor_answer error_answer(std::uint64_t request, const std::exception_ptr& error) {
  actor_answer answer;
  answer.request = request;
  auto described = describe_exception(error); // "type: text"
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    answer.error_text = e.what();
    answer.error_type = described.substr(0, described.size() - answer.error_text.size() - 2);
  } catch (...) {
    answer.error_type = described;
    answer.error_text = described;
  }
  return answer;
}

std::exception_ptr rebuild_error(const actor_answer& answer, int rank) {
  using maker = std::function<std::exception_ptr(const std::string&)>;
  static const std::map<std::string, maker> known = {
    {"am::error", [](const std::string& t) { return std::make_exception_ptr(error(t)); }},
    {"am::value_error", [](const std::string& t) { return std::make_exception_ptr(value_error(t)); }},
    {"am::type_error", [](const std::string& t) { return std::make_exception_ptr(type_error(t)); }},
    {"am::timeout_error", [](const std::string& t) { return std::make_exception_ptr(timeout_error(t)); }},
    {"am::runtime_error", [](const std::string& t) { return std::make_exception_ptr(runtime_error(t)); }},
    {"am::desync_error", [](const std::string& t) { return std::make_exception_ptr(desync_error(t)); }},
    {"am::out_of_memory_error", [](const std::string& t) { return std::make_exception_ptr(out_of_memory_error(t)); }},
    {"am::actor_fault", [](const std::string& t) { return std::make_exception_ptr(actor_fault(t)); }},
    {"std::runtime_error", [](const std::string& t) { return std::make_exception_ptr(std::runtime_error(t)); }},
    {"std::logic_error", [](const std::string& t) { return std::make_exception_ptr(std::logic_error(t)); }},
    {"std::invalid_argument", [](const std::string& t) { return std::make_exception_ptr(std::invalid_argument(t)); }},
    {"std::out_of_range", [](const std::string& t) { return std::make_exception_ptr(std::out_of_range(t)); }},
    {"std::domain_error", [](const std::string& t) { return std::make_exception_ptr(std::domain_error(t)); }},
    {"std::length_error", [](const std::string& t) { return std::make_exception_ptr(std::length_error(t)); }},
    {"std::range_error", [](const std::string& t) { return std::make_exception_ptr(std::range_error(t)); }},
    {"std::overflow_error", [](const std::string& t) { return std::make_exception_ptr(std::overflow_error(t)); }},
  };
  if (answer.error_type == "am::process_failure_error")
    return std::make_exception_ptr(process_failure_error(answer.error_text, -1));
  if (answer.error_type == "am::actor_failure_error")
    return std::make_exception_ptr(actor_failure_error(answer.error_text, rank));
  auto it = known.find(answer.error_type);
  if (it != known.end())
    return it->second(answer.error_text);
  return std::make_exception_ptr(remote_error(answer.error_type, answer.error_text));
}

} // namespace am::detail
