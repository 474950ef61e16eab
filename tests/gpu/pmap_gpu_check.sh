#!/usr/bin/env bash
# The GPU check of pmap, for a machine with one GPU (or more), in under 5 minutes:
#   1. the CUDA kernels against the CPU reference (gpu_test_cuda_ops, gpu_test_cuda_fusion),
#   2. the NCCL engine, single rank on one GPU, for every collective pmap uses: all-reduce of
#      sum/mean/max/min (psum, pmean, pmax, pmin), all-gather, reduce-scatter (psum_scatter),
#      broadcast and all-to-all (gpu_test_nccl),
#   3. every pmap collective and a data-parallel training step on the GPUs against the CPU devices
#      (gpu_test_pmap_gpu), once with the collectives as NCCL stages (the default,
#      devices/collectives/stage_nccl.hpp) and once as one plan (AM_PMAP_NCCL_STAGES=0),
#   4. elementwise bandwidth as a fraction of the HBM peak, next to cudaMemcpy (bench_pmap_gpu).
# DIR is a build directory (tests/ and bench/ inside) or a bundle of tools/gpu-bundle.sh (bin/).
# Exit status: 0 all passed, 4 skipped (no usable GPU; the reason is printed), 1 something failed.
#
#   tests/gpu/pmap_gpu_check.sh [DIR]          # DIR defaults to ./build
set -uo pipefail

dir=${1:-build}
budget=${AM_PMAP_GPU_BUDGET:-280} # seconds for everything; each step gets what is left
start=$SECONDS

find_binary() {
  for candidate in "$dir/tests/$1" "$dir/bench/$1" "$dir/bin/$1"; do
    if [ -x "$candidate" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

# Without a GPU, say why once and stop (the tests would each skip with the same reason).
if ! probe=$(find_binary gpu_test_pmap_gpu); then
  echo "pmap_gpu_check: gpu_test_pmap_gpu not found under $dir (build it: cmake --build $dir --target gpu_test_pmap_gpu)"
  exit 1
fi
export AM_LOG=${AM_LOG:-warning}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  reason=$("$probe" 2>&1 | grep -m1 'SKIPPED' || true)
  echo "pmap_gpu_check: SKIPPED: no usable GPU on this machine (nvidia-smi: $(command -v nvidia-smi || echo missing)). ${reason}"
  exit 4
fi
nvidia-smi -L

failed=()
skipped=0
step() {
  local name=$1
  shift
  local left=$((budget - (SECONDS - start)))
  if [ "$left" -le 5 ]; then
    echo "-- $name: NOT RUN (the ${budget} s budget is spent)"
    failed+=("$name")
    return
  fi
  local binary
  if ! binary=$(find_binary "$name"); then
    echo "-- $name: NOT FOUND under $dir"
    failed+=("$name")
    return
  fi
  echo "== $name (at most $left s)"
  local t0=$SECONDS
  timeout "$left" "$binary" "$@"
  local rc=$?
  case $rc in
    0) echo "-- $name: passed ($((SECONDS - t0)) s)" ;;
    4) echo "-- $name: SKIPPED"; skipped=$((skipped + 1)) ;;
    124) echo "-- $name: TIMED OUT"; failed+=("$name") ;;
    *) echo "-- $name: FAILED (exit $rc)"; failed+=("$name") ;;
  esac
}

step gpu_test_cuda_ops
step gpu_test_cuda_fusion
step gpu_test_nccl
step gpu_test_pmap_gpu --durations yes
echo "== the same with pmap's collectives as one plan (AM_PMAP_NCCL_STAGES=0)"
AM_PMAP_NCCL_STAGES=0 step gpu_test_pmap_gpu --durations yes
step bench_pmap_gpu --mib 1024 --rounds 20

echo "== pmap_gpu_check: $((SECONDS - start)) s in all"
if [ ${#failed[@]} -gt 0 ]; then
  echo "== FAILED: ${failed[*]}"
  exit 1
fi
if [ "$skipped" -gt 0 ]; then
  echo "== passed, $skipped step(s) skipped"
  exit 4
fi
echo "== all passed"
