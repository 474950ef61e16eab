// Which kernels OpenBLAS runs: as wide as the CPU's vectors unless the user chose (Debian's OpenBLAS
// takes a CPU newer than its model table for a Prescott and runs SSE3 kernels, several times slower:
// doc/performance.md, "BLAS kernels chosen from the CPU's features").
#include "devices/cpu/blas_kernels.hpp"
#include "devices/cpu/cpu_blas.hpp"

#include <catch2/catch.hpp>

#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

using namespace am::detail;

namespace {

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// A 37x29 by 29x41 float32 product through run_dot, against the plain loop in double.
bool product_matches() {
  const std::int64_t m = 37, k = 29, n = 41;
  std::vector<float> x(m * k), y(k * n), out(m * n);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>((i * 7) % 13) - 6.0f;
  for (std::size_t i = 0; i < y.size(); ++i)
    y[i] = static_cast<float>((i * 5) % 11) - 5.0f;
  run_dot(am::dtype::float32, x.data(), {m, k}, y.data(), {k, n}, out.data(), {0, 0}, nullptr);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (std::int64_t p = 0; p < k; ++p)
        want += double(x[i * k + p]) * double(y[p * n + j]);
      if (out[i * n + j] != static_cast<float>(want)) // small integers: exact in float32
        return false;
    }
  return true;
}

} // namespace

TEST_CASE("the BLAS runs kernels as wide as the CPU's vectors unless the user chose", "[blas]") {
  const auto& choice = ensure_blas_kernels();
  INFO(choice.library << ": " << choice.core << " (" << choice.why << "); OpenBLAS detected " << choice.detected);
  CHECK(lower(choice.core) == lower(openblas_core()));
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  if (user != nullptr && *user != '\0') {
    CHECK_THAT(choice.why, Catch::Contains("the user's choice"));
    return;
  }
  const auto f = this_cpu_features();
  if (!core_for(f).empty())
    CHECK(core_vector_bits(choice.core) >= vector_bits(f));
  CHECK(product_matches());
}

TEST_CASE("OpenBLAS can be made to choose again: narrow kernels, then the CPU's own", "[blas]") {
  ensure_blas_kernels();
  // The machine may set OPENBLAS_CORETYPE for every program (one of ours sets Haswell): choosing
  // again sets it only to tell OpenBLAS, and leaves it as it found it.
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  const std::string before = user != nullptr ? user : "";
  const bool was_set = user != nullptr;
  const auto f = this_cpu_features();
  CHECK(lower(select_openblas_core("Prescott")) == "prescott");
  CHECK(product_matches());
  const std::string wanted = core_for(f).empty() ? "Prescott" : core_for(f);
  CHECK(lower(select_openblas_core(wanted)) == lower(wanted));
  CHECK(product_matches());
  const char* after = std::getenv("OPENBLAS_CORETYPE");
  CHECK((after != nullptr) == was_set);
  CHECK((after != nullptr ? std::string(after) : std::string()) == before);
}

TEST_CASE("the core type follows the CPU's vector features", "[blas]") {
  cpu_vector_features sse;
  CHECK(core_for(sse).empty());
  CHECK(vector_bits(sse) == 128);
  cpu_vector_features avx{true};
  CHECK(core_for(avx) == "Sandybridge");
  cpu_vector_features avx2{true, true, true};
  CHECK(core_for(avx2) == "Haswell");
  CHECK(vector_bits(avx2) == 256);
  avx2.amd = true;
  CHECK(core_for(avx2) == "Zen");
  cpu_vector_features skx{true, true, true, true};
  CHECK(core_for(skx) == "SkylakeX");
  CHECK(vector_bits(skx) == 512);
  skx.avx512bf16 = true;
  CHECK(core_for(skx) == "Cooperlake");
  CHECK(core_vector_bits("PRESCOTT") == 128);
  CHECK(core_vector_bits("Haswell") == 256);
  CHECK(core_vector_bits("SkylakeX") == 512);
  CHECK(core_vector_bits("no such core") == 0);
}
