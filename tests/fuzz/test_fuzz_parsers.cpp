// Bounded, seeded mutation fuzzing of the text the user types: the PartitionSpec, shape and mesh-shape
// parsers and the `actormesh` command line (run in process through am::tools::run_cli, the function
// the tool's main calls). Inputs start from the corpus in tests/fuzz/corpus/ (one input per line; in
// cli.txt one command line per line, arguments separated by one blank, '' for an empty argument) and
// are mutated by a fixed-seed generator, so every run tries the same inputs.
//
// An am::error is the expected answer to bad input; any other exception fails the test, and a crash
// or undefined behaviour fails it under the ASan+UBSan build. AM_FUZZ_SEED and AM_FUZZ_ITERATIONS
// (a multiplier, default 1) widen a local run: AM_FUZZ_ITERATIONS=100 AM_FUZZ_SEED=7 ...
#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/shape.hpp"
#include "actormesh/sharding/mesh.hpp"
#include "actormesh/sharding/partition_spec.hpp"
#include "tools/commands.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>
#include "support/build_paths.hpp"

namespace {

std::vector<std::string> corpus(const std::string& name) {
  std::ifstream in(am::testing::source_dir() + "/tests/fuzz/corpus/" + name);
  REQUIRE(in.good());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  REQUIRE(!lines.empty());
  return lines;
}

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  return text && *text ? std::strtoull(text, nullptr, 10) : fallback;
}

std::uint64_t iterations(std::uint64_t base) {
  return base * env_number("AM_FUZZ_ITERATIONS", 1);
}

// The input as a C++ string literal, so a failure can be replayed.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char* const hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out + "\"";
}

// Byte-level mutations biased towards the parsers' grammar and towards sizes at the edge of int64.
class mutator {
public:
  explicit mutator(std::vector<std::string> seeds) : seeds_(std::move(seeds)), rng_(env_number("AM_FUZZ_SEED", 0x5eed)) {}

  // A corpus entry mutated 0 to 4 times.
  std::string next() { return mutate(pick(seeds_)); }

  std::string mutate(std::string s) {
    const auto rounds = below(5);
    for (std::size_t r = 0; r < rounds; ++r) {
      const auto at = s.empty() ? 0 : below(s.size() + 1);
      switch (below(7)) {
        case 0: // erase a run
          if (!s.empty() && at < s.size())
            s.erase(at, 1 + below(4));
          break;
        case 1: // insert a character of the grammar
          s.insert(at, 1, pick(std::string_view(alphabet)));
          break;
        case 2: // replace a character
          if (at < s.size())
            s[at] = pick(std::string_view(alphabet));
          break;
        case 3: // insert a token: edge-of-int64 numbers and syntax
          s.insert(at, std::string(pick(tokens)));
          break;
        case 4: { // splice in a piece of another seed
          const auto& other = pick(seeds_);
          const auto from = below(other.size() + 1);
          s.insert(at, other.substr(from, below(other.size() - from + 1)));
          break;
        }
        case 5: // duplicate a run
          if (at < s.size())
            s.insert(at, s.substr(at, 1 + below(8)));
          break;
        default: // any byte, NUL and high bytes included
          s.insert(at, 1, static_cast<char>(below(256)));
          break;
      }
    }
    return s;
  }

  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng_() % n); }

  template <class Range>
  auto pick(const Range& r) -> decltype(r[0]) {
    return r[below(std::size(r))];
  }

private:
  static constexpr std::string_view alphabet = "0123456789x,+() -_abyzN\t\n'";
  static constexpr std::string_view tokens[] = {
      "9223372036854775807", "9223372036854775808", "18446744073709551616", "4294967296", "761496548840",
      "48448661", "16384", "16385", "0", "-1", "none", "None", "(", ")", ",", ",,", "+", "x", "a+b", "(a,(b,c))"};

  std::vector<std::string> seeds_;
  std::mt19937_64 rng_;
};

// Runs `parse` on `count` mutated inputs: success and am::error are both fine, anything else fails.
template <class Parse>
void fuzz_text(const std::string& corpus_name, std::uint64_t count, Parse parse) {
  mutator m(corpus(corpus_name));
  std::uint64_t refused = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto input = m.next();
    try {
      parse(input);
    } catch (const am::error&) {
      ++refused;
    } catch (const std::exception& e) {
      FAIL("input " << quoted(input) << " raised a non-actormesh exception: " << e.what());
    }
  }
  // Both answers must occur, or the mutations are not reaching the parser's interesting paths.
  CHECK(refused > 0);
  CHECK(refused < count);
}

// A command line of the corpus, split at blanks ('' is an empty argument).
std::vector<std::string> split_args(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string word; std::getline(in, word, ' ');)
    if (!word.empty())
      out.push_back(word == "''" ? std::string() : word);
  return out;
}

} // namespace

TEST_CASE("fuzz: the PartitionSpec parser answers a spec or am::value_error", "[fuzz]") {
  fuzz_text("spec.txt", iterations(50000), [](const std::string& text) {
    const auto spec = am::parse_partition_spec(text);
    CHECK(spec.to_string().rfind("P(", 0) == 0);
  });
}

TEST_CASE("fuzz: deeply nested parentheses are refused, not a stack overflow", "[fuzz]") {
  const std::string deep = std::string(1'000'000, '(') + "x" + std::string(1'000'000, ')');
  CHECK_THROWS_WITH(am::parse_partition_spec(deep), Catch::Contains("nested deeper than 16 levels"));
  CHECK(am::parse_partition_spec("(((x)))") == am::P("x")); // Python: (x) is x
  CHECK_THROWS_WITH(am::parse_partition_spec("(x,(y,z))"), Catch::Contains("cannot contain a nested tuple"));
}

TEST_CASE("fuzz: the shape parser answers a valid shape or am::value_error", "[fuzz]") {
  fuzz_text("shape.txt", iterations(50000), [](const std::string& text) {
    const auto shape = am::parse_shape(text);
    CHECK(am::try_element_count(shape).has_value());
  });
}

TEST_CASE("fuzz: the mesh-shape parser answers a valid mesh shape or am::value_error", "[fuzz]") {
  fuzz_text("mesh.txt", iterations(50000), [](const std::string& text) {
    const auto shape = am::parse_mesh_shape(text);
    const auto count = am::try_element_count(shape);
    CHECK((count && *count > 0));
    // A mesh shape that does not match the devices is refused with JAX's message, never wrapped.
    CHECK_THROWS_AS(am::create_device_mesh(shape, {}), am::value_error);
  });
}

TEST_CASE("fuzz: the command line exits 0, or 2 with one line on stderr", "[fuzz]") {
  std::vector<std::string> lines = corpus("cli.txt");
  mutator m(lines);
  std::vector<std::string> words;
  for (const auto& line : lines)
    for (auto& w : split_args(line))
      words.push_back(std::move(w));
  const auto count = iterations(5000);
  std::uint64_t failed = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    auto args = split_args(m.pick(lines));
    for (auto rounds = m.below(4); rounds > 0; --rounds) {
      const auto at = m.below(args.size() + 1);
      switch (m.below(4)) {
        case 0: // mutate one argument's text
          if (at < args.size())
            args[at] = m.mutate(args[at]);
          break;
        case 1: // insert an argument seen in the corpus
          args.insert(args.begin() + static_cast<std::ptrdiff_t>(at), m.pick(words));
          break;
        case 2: // drop one
          if (at < args.size())
            args.erase(args.begin() + static_cast<std::ptrdiff_t>(at));
          break;
        default: // swap two
          if (at < args.size())
            std::swap(args[at], args[m.below(args.size())]);
          break;
      }
    }
    if (!args.empty() && args[0] == "info")
      args[0] = "shards"; // info starts a runtime: not a parser, and too slow to fuzz here
    std::vector<const char*> argv{"actormesh"};
    std::string replay = "actormesh";
    for (const auto& a : args) {
      argv.push_back(a.c_str());
      replay += " " + quoted(a);
    }
    std::ostringstream out, err;
    const int status = am::tools::run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
    INFO(replay << "\nstderr: " << err.str());
    REQUIRE((status == 0 || status == 2));
    if (status == 2) {
      ++failed;
      const auto e = err.str();
      REQUIRE(!e.empty());
      REQUIRE(e.find('\n') == e.size() - 1);
    }
  }
  CHECK(failed > 0);
  CHECK(failed < count);
}
