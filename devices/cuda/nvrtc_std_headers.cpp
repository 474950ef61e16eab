// The standard headers NVRTC lacks, reduced to what the embedded device sources use. Kept apart
// from the generated embedding so a new include in a device header is one line to add here.
#include "devices/cuda/embedded_sources.hpp"

namespace am::detail::cuda {

const std::vector<source_header>& nvrtc_std_headers() {
  static const std::vector<source_header> headers = {
    {"cstdint", R"(#pragma once
namespace std {
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
}
)"},
    {"cstddef", R"(#pragma once
namespace std { typedef unsigned long size_t; typedef long ptrdiff_t; }
)"},
  };
  return headers;
}

} // namespace am::detail::cuda
