#!/usr/bin/env bash
# Runs every single-process CPU benchmark of bench/ one after another and prints one table of their
# ratios: each program's `RATIO <value> <what>` lines (bench_report.hpp), every figure against the
# peer that program measured in the same run. The cluster benchmarks have their own driver
# (run_cluster_bench.sh), the GPU ones need a GPU.
#
#   bench/run_cpu_benchmarks.sh BUILD_DIR [--quick]
#
# BUILD_DIR holds the built benchmarks (`cmake --build BUILD_DIR -j2 --target benchmarks`). --quick
# runs smaller sizes and fewer rounds (a few minutes) for a first look; figures for doc/performance.md
# come from full runs on a quiet machine. Each program's whole output is kept in a folder named at
# the end; a program that fails or times out gets a row saying so, and the script exits 1.
set -uo pipefail

build=${1:?usage: bench/run_cpu_benchmarks.sh BUILD_DIR [--quick]}
quick=0
case "${2:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "run_cpu_benchmarks.sh: unknown option '$2' (only --quick)" >&2; exit 2 ;;
esac
bench="$build/bench"
logs=$(mktemp -d /tmp/am_cpu_benchmarks.XXXXXX)

# name, then its flags in a quick run (a full run uses each program's defaults).
programs=(
  "bench_lanes|--rounds 2000 --messages 50000"
  "bench_matmul|--n 1024 --rounds 2 --batch 16"
  "bench_blas_kernels|--n 1024 --rounds 2"
  "bench_cpu_kernels|--reps 3"
  "bench_sharding|--n 4096 --reps 3 --rounds 3"
  "bench_reductions|--n 4096 --reps 3"
  "bench_random|--n 2048 --reps 3"
  "bench_pmap|--rounds 2 --steps 100 --psum-rounds 5"
  "bench_pmap_stages|--rounds 5"
  "bench_trace|--ops 5000 --rounds 3"
  "bench_colocated|--rounds 1000 --calls 2000 --no-ray"
)

failed=0
table=()
for entry in "${programs[@]}"; do
  name=${entry%%|*}
  args=()
  if [ "$quick" = 1 ]; then read -r -a args <<<"${entry#*|}"; fi
  if [ ! -x "$bench/$name" ]; then
    table+=("$(printf '%-20s %9s  %s' "$name" "-" "not built (cmake --build $build --target benchmarks)")")
    failed=1
    continue
  fi
  echo "run_cpu_benchmarks: $name ${args[*]}" >&2
  timeout 1800 "$bench/$name" "${args[@]}" >"$logs/$name.out" 2>"$logs/$name.err"
  rc=$?
  if [ "$rc" = 4 ]; then
    table+=("$(printf '%-20s %9s  %s' "$name" "-" "skipped: $(head -1 "$logs/$name.out")")")
    continue
  fi
  if [ "$rc" != 0 ]; then
    table+=("$(printf '%-20s %9s  %s' "$name" "-" "FAILED (exit $rc): $(tail -1 "$logs/$name.err")")")
    failed=1
    continue
  fi
  while read -r _ value what; do
    table+=("$(printf '%-20s %9s  %s' "$name" "$value" "$what")")
  done < <(grep '^RATIO ' "$logs/$name.out")
done

printf '\n%-20s %9s  %s\n' "benchmark" "ratio" "figure (each against its peer in the same run)"
printf '%s\n' "${table[@]}"
echo
echo "whole outputs: $logs"
exit "$failed"
