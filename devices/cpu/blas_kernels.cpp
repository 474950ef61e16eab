#include "devices/cpu/blas_kernels.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>

// OpenBLAS's own entry points (exported by its DYNAMIC_ARCH builds; cblas.h declares the first
// two). gotoblas_dynamic_quit forgets the kernel table, gotoblas_dynamic_init chooses one again,
// reading OPENBLAS_CORETYPE as at load time.
extern "C" {
char* openblas_get_corename(void);
char* openblas_get_config(void);
void gotoblas_dynamic_init(void);
void gotoblas_dynamic_quit(void);
}

namespace am::detail {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

} // namespace

cpu_vector_features this_cpu_features() noexcept {
  __builtin_cpu_init();
  cpu_vector_features f;
  f.avx = __builtin_cpu_supports("avx");
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
             && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  f.avx512bf16 = f.avx512 && __builtin_cpu_supports("avx512bf16");
  f.amd = __builtin_cpu_is("amd");
  return f;
}

int vector_bits(const cpu_vector_features& f) noexcept {
  if (f.avx512)
    return 512;
  if ((f.avx2 && f.fma) || f.avx)
    return 256;
  return 128;
}

int core_vector_bits(std::string_view core) noexcept {
  const std::string c = lower(core);
  if (c == "skylakex" || c == "cooperlake" || c == "sapphirerapids")
    return 512;
  if (c == "haswell" || c == "zen" || c == "sandybridge" || c == "bulldozer" || c == "piledriver"
      || c == "steamroller" || c == "excavator")
    return 256;
  if (c == "prescott" || c == "core2" || c == "penryn" || c == "dunnington" || c == "nehalem" || c == "atom"
      || c == "nano" || c == "opteron" || c == "opteron_sse3" || c == "barcelona" || c == "bobcat"
      || c == "katmai" || c == "coppermine" || c == "northwood" || c == "banias" || c == "athlon")
    return 128;
  return 0;
}

std::string core_for(const cpu_vector_features& f) {
  if (f.avx512bf16)
    return "Cooperlake";
  if (f.avx512)
    return "SkylakeX";
  if (f.avx2 && f.fma)
    return f.amd ? "Zen" : "Haswell";
  if (f.avx)
    return "Sandybridge";
  return "";
}

std::string openblas_core() { return openblas_get_corename(); }

std::string select_openblas_core(const std::string& core) {
  const char* before = std::getenv("OPENBLAS_CORETYPE");
  const std::string saved = before ? before : "";
  ::setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  // The variable was only the way to tell OpenBLAS: programs this process starts choose for
  // themselves.
  if (before)
    ::setenv("OPENBLAS_CORETYPE", saved.c_str(), 1);
  else
    ::unsetenv("OPENBLAS_CORETYPE");
  return openblas_core();
}

const blas_kernel_choice& ensure_blas_kernels() {
  static blas_kernel_choice choice;
  static std::once_flag once;
  std::call_once(once, [] {
    choice.library = openblas_get_config();
    choice.detected = openblas_core();
    choice.core = choice.detected;
    const cpu_vector_features f = this_cpu_features();
    const int cpu_bits = vector_bits(f);
    const int kernel_bits = core_vector_bits(choice.detected);
    const char* user = std::getenv("OPENBLAS_CORETYPE");
    if (user != nullptr && *user != '\0') {
      choice.why = "OPENBLAS_CORETYPE=" + std::string(user) + " (the user's choice)";
      return;
    }
    const std::string wanted = core_for(f);
    if (kernel_bits >= cpu_bits || wanted.empty()) {
      choice.why = "chosen by OpenBLAS; as wide as this CPU's " + std::to_string(cpu_bits) + "-bit vectors";
      return;
    }
    choice.core = select_openblas_core(wanted);
    choice.why = "chosen from this CPU's features (" + std::to_string(cpu_bits) + "-bit vectors): OpenBLAS took it for "
                 + choice.detected + " (" + std::to_string(kernel_bits) + "-bit kernels)";
  });
  return choice;
}

} // namespace am::detail
