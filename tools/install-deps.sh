#!/usr/bin/env bash
# Installs what actormesh needs from Debian's packages, only when something is missing (run as root
# on Debian 12). CUDA and NCCL come with the machine image when present; the build works without.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  ccache                   # the compiler cache the build uses when present (cmake/CompilerCache.cmake)
  libcaf-dev libssl-dev    # the actor framework (core, io, openssl)
  libboost-dev             # Boost.Asio / Boost.Interprocess headers
  libfmt-dev               # logging and formatting
  catch2                   # the test suite (Catch2 v2)
  libcli11-dev             # the actormesh command-line tool
  libsleef-dev             # vectorized math for the CPU kernels
  libopenblas-dev          # matrix products of the CPU devices (BLAS)
  libdnnl2                 # oneDNN: the float32 products, opened at run time (devices/cpu/onednn_sgemm.hpp)
  libgloo-dev              # collectives across processes on host memory (devices/collectives/)
  libucx-dev               # UCX: the collectives' checks over shared memory (devices/collectives/shm_mesh.hpp)
  libjemalloc-dev          # the allocator of programs using actormesh (see cmake/Jemalloc.cmake)
  libpng-dev               # `actormesh trace summary --png` (without it, --png refuses)
  nlohmann-json3-dev       # JSON of checkpoint indexes and trace files (header-only)
  zlib1g-dev               # CRC-32 (sync_global_devices), reading .json.gz traces
  prometheus-cpp-dev       # the text format of the metrics endpoint (--am-metrics-port)
  libmicrohttpd-dev        # the metrics endpoint's HTTP server
  python3                  # the test unit/doc_snippets (tests/doc_snippets/check_docs.py)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
