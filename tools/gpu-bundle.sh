#!/usr/bin/env bash
# Builds actormesh here (Release, CUDA on, sm_90) in build-gpu and gathers into gpu-bundle/ what
# tools/gpu-check.sh runs on a lent GPU machine, whose image has no CAF, fmt, SLEEF, CLI11 or Catch2
# and can fetch nothing: the `actormesh` tool, the GPU test executables (and the NVRTC unit tests),
# bench_gpu, bench_pmap_gpu, tests/gpu/pmap_gpu_check.sh (pmap's GPU check), libactormesh.so, and
# the Debian shared libraries they load (from ldd). Left out: glibc, libstdc++, libgcc (the image
# has them), and libcuda, libnccl and libnvrtc (the driver's, and the image's own NCCL/NVRTC: 208 MB
# and 109 MB are too big to carry). cuBLAS is not linked but loaded at run time
# (devices/cuda/cublas_loader.hpp) from the image's Python environment, as NVRTC: libcublas and
# libcublasLt are 54 + 542 MB. The bundle must stay under 60 MiB.
#
#   tools/gpu-bundle.sh            # then carry gpu-bundle/ and run gpu-bundle/gpu-check.sh there
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${AM_GPU_BUILD_DIR:-$root/build-gpu}
out=$root/gpu-bundle
jobs=${JOBS:-2}
limit=$((60 * 1024 * 1024))

cmake -S "$root" -B "$build" -G Ninja -DAM_CUDA=ON -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null

tests=()
for src in "$root"/tests/gpu/test_*.cpp; do
  tests+=("gpu_$(basename "${src%.cpp}")")
done
for src in "$root"/tests/unit/test_nvrtc_*.cpp; do
  tests+=("unit_$(basename "${src%.cpp}")")
done
cmake --build "$build" -j"$jobs" --target actormesh actormesh_tool bench_gpu bench_pmap_gpu "${tests[@]}"

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
binaries=("$build/tools/actormesh" "$build/bench/bench_gpu" "$build/bench/bench_pmap_gpu")
for t in "${tests[@]}"; do
  binaries+=("$build/tests/$t")
done
cp "${binaries[@]}" "$out/bin/"
cp -P "$build"/libactormesh.so* "$out/lib/"
cp "$root/tools/gpu-check.sh" "$root/tests/gpu/pmap_gpu_check.sh" "$out/"

# The shared libraries the binaries load, minus the ones the image provides or that are too big.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+|libgcc_s|libpthread|libdl\.so|librt\.so|libcuda\.so|libnccl|libnvrtc|libactormesh)'
for bin in "${binaries[@]}" "$build/libactormesh.so"; do
  ldd "$bin" | awk '/=> \// { print $1, $3 }'
done | sort -u | while read -r soname path; do
  if [[ "$soname" =~ $skip ]]; then
    continue
  fi
  cp -L "$path" "$out/lib/$soname"
done

size=$(du -sb "$out" | cut -f1)
echo "gpu-bundle: $(find "$out" -type f | wc -l) files, $((size / 1024 / 1024)) MiB in $out"
ls "$out/lib"
if [ "$size" -gt "$limit" ]; then
  echo "gpu-bundle: $size bytes is over the 60 MiB limit" >&2
  exit 1
fi
