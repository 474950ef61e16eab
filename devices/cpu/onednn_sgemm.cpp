#include "devices/cpu/onednn_sgemm.hpp"

#include "actormesh/actors/errors.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string_view>

namespace am::detail {

namespace {

/// dnnl_sgemm's signature (oneapi/dnnl/dnnl.h, oneDNN 2.x; dnnl_dim_t is int64_t): row-major, the
/// status 0 (dnnl_success) when it ran.
using sgemm_fn = int (*)(char, char, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                         const float*, std::int64_t, float, float*, std::int64_t);

/// dnnl_version()'s answer (the fields read here).
struct dnnl_version_fields {
  int major, minor, patch;
  const char* hash;
};

/// oneDNN opened once: its product, or null when it is not installed.
struct onednn_library {
  sgemm_fn sgemm = nullptr;
  std::string version;
  int isa = 0;

  onednn_library() {
    void* handle = ::dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr)
      return;
    sgemm = reinterpret_cast<sgemm_fn>(::dlsym(handle, "dnnl_sgemm"));
    auto version_of = reinterpret_cast<const dnnl_version_fields* (*)()>(::dlsym(handle, "dnnl_version"));
    if (version_of != nullptr) {
      const auto* v = version_of();
      version = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
    }
    if (auto isa_of = reinterpret_cast<int (*)()>(::dlsym(handle, "dnnl_get_effective_cpu_isa")))
      isa = isa_of();
  }
};

const onednn_library& library() {
  static const onednn_library opened;
  return opened;
}

} // namespace

sgemm_choice choose_sgemm(const char* setting, bool found, const std::string& version) {
  const std::string_view asked = setting == nullptr ? "" : setting;
  if (!asked.empty() && asked != "onednn" && asked != "openblas")
    throw value_error("AM_SGEMM must be onednn or openblas, not '" + std::string(asked) + "'");
  if (asked == "openblas")
    return {false, "OpenBLAS (AM_SGEMM=openblas)"};
  if (!found)
    return {false, std::string("OpenBLAS (oneDNN's libdnnl.so.2 is not installed") +
                       (asked == "onednn" ? ", though AM_SGEMM=onednn asked for it)" : ")")};
  return {true, "oneDNN " + version + " (dnnl_sgemm; measured faster than OpenBLAS on float32)"};
}

const sgemm_choice& float32_products() {
  static const sgemm_choice choice = [] {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    // LeakSanitizer (GCC 12) crashes at exit reading the thread-local storage of a library opened
    // with dlopen, which oneDNN's OpenMP threads hold; ThreadSanitizer cannot see into its
    // uninstrumented OpenMP runtime. Sanitizer builds test the runtime's own code with OpenBLAS.
    return sgemm_choice{false, "OpenBLAS (a sanitizer build does not open oneDNN)"};
#endif
    const char* setting = std::getenv("AM_SGEMM");
    if (setting != nullptr && std::string_view(setting) == "openblas")
      return choose_sgemm(setting, false, ""); // not even opened
    return choose_sgemm(setting, library().sgemm != nullptr, library().version);
  }();
  return choice;
}

int onednn_vector_bits() {
  if (!float32_products().onednn)
    return 0;
  // dnnl_cpu_isa_t is a bit set: 0x1 SSE4.1, 0x2 AVX, 0x4 AVX2, 0x20 AVX-512 core (and wider sets
  // above it, which include those bits).
  const int isa = library().isa;
  return (isa & 0x20) ? 512 : (isa & 0x6) ? 256 : 128;
}

bool onednn_sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc) {
  if (!float32_products().onednn)
    return false;
  return library().sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c,
                         ldc) == 0;
}

} // namespace am::detail
