#!/usr/bin/env bash
# Runs on a lent GPU machine from a bundle made by tools/gpu-bundle.sh (bin/, lib/ and this script):
# prints nvidia-smi and `actormesh info`, then runs the GPU tests, the NVRTC unit tests and
# bench_gpu and bench_pmap_gpu, each under a timeout (the bundle's pmap_gpu_check.sh is pmap's
# GPU check alone, in its 5-minute budget). The image has no CAF/fmt/Catch2 (they come in lib/) and its own
# NCCL, NVRTC and cuBLAS in its Python environment (site-packages/nvidia/*/lib), which go on
# LD_LIBRARY_PATH after lib/. Test exit codes: 0 passed, 4 skipped (no usable GPU), else failed.
#
#   gpu-bundle/gpu-check.sh [--sanitize]      # --sanitize: tests under compute-sanitizer
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
test_timeout=${AM_GPU_TEST_TIMEOUT:-240}
sanitize=()
if [ "${1:-}" = "--sanitize" ] && command -v compute-sanitizer >/dev/null; then
  sanitize=(compute-sanitizer --error-exitcode 9)
fi

nvidia_dirs=()
site_dirs=$(python3 -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()] + sys.path))' 2>/dev/null || true)
for sp in $site_dirs; do
  for d in "$sp"/nvidia/*/lib; do
    [ -d "$d" ] && nvidia_dirs+=("$d")
  done
done
if [ ${#nvidia_dirs[@]} -eq 0 ]; then
  while IFS= read -r d; do nvidia_dirs+=("$d"); done < <(find / -maxdepth 8 -type d -path '*site-packages/nvidia/*/lib' 2>/dev/null)
fi
library_path="$here/lib"
for d in $(printf '%s\n' "${nvidia_dirs[@]}" | sort -u); do
  library_path="$library_path:$d"
done
export LD_LIBRARY_PATH="$library_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export AM_LOG=${AM_LOG:-warning}
echo "== LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
for lib in libnvrtc.so libnccl.so libcublas.so libcublasLt.so; do
  found=$(for d in "${nvidia_dirs[@]}"; do ls "$d"/$lib* 2>/dev/null; done | head -1)
  echo "   $lib: ${found:-not found}"
done

echo "== nvidia-smi"
nvidia-smi || echo "(nvidia-smi failed)"

echo "== actormesh info"
timeout 60 "$here/bin/actormesh" info || echo "(actormesh info failed with $?)"

failed=()
run() {
  local name=$1
  shift
  echo "== $name"
  local start=$SECONDS
  timeout "$test_timeout" "$@"
  local rc=$?
  case $rc in
    0) echo "-- $name: passed ($((SECONDS - start)) s)" ;;
    4) echo "-- $name: SKIPPED (no usable GPU)" ;;
    124) echo "-- $name: TIMED OUT after $test_timeout s"; failed+=("$name") ;;
    *) echo "-- $name: FAILED (exit $rc)"; failed+=("$name") ;;
  esac
}

for t in "$here"/bin/unit_test_nvrtc_* "$here"/bin/gpu_test_*; do
  [ -x "$t" ] || continue
  run "$(basename "$t")" "${sanitize[@]}" "$t" --durations yes
done
run bench_gpu "$here/bin/bench_gpu"
run bench_pmap_gpu "$here/bin/bench_pmap_gpu"

if [ ${#failed[@]} -gt 0 ]; then
  echo "== FAILED: ${failed[*]}"
  exit 1
fi
echo "== all GPU checks passed (or were skipped)"
