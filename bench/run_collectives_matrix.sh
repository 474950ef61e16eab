#!/usr/bin/env bash
# The small and medium collectives of issue 24 (item 4), each beside Open MPI in the same run:
# a communicator's all_gather, broadcast and float32-sum all_reduce (bench_multihost_utils, the
# engine alone) against MPI_Allgather, MPI_Bcast and MPI_Allreduce of the same bytes
# (mpi_peers allgather|bcast|sum), over TCP (`--mca btl tcp,self`) and shared memory
# (`--mca btl vader,self`), at
#
#   4 processes: 1 KiB and 64 KiB;   16 and 32 processes: 1 KiB and 1 MiB
#
# (--sizes "N:BYTES ..." takes others). One table: per operation and size our median, MPI's over
# TCP and over shared memory, and the speed ratios MPI time / ours (higher is better; the issue's
# target is at least 0.8x). Each figure is the slowest process's median over the rounds of one run;
# run the script several times for a range. Our side times calls back to back, MPI's after an
# untimed barrier each (bench/mpi_peers.cpp), as run_multihost_bench.sh does.
#
# Builds nothing: give it a build directory with the targets actormesh_tool, bench_multihost_utils
# and mpi_peers. Every process is bounded by `timeout` and the launcher's own, so it always ends.
#
#   bench/run_collectives_matrix.sh build-bench [--sizes "4:1024 32:1048576"]
set -uo pipefail

if [[ $# -lt 1 || ! -d "$1" ]]; then
  echo "usage: $0 BUILD_DIR [--sizes \"N:BYTES ...\"]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
sizes="4:1024 4:65536 16:1024 16:1048576 32:1024 32:1048576"
if [[ "${2:-}" == "--sizes" ]]; then
  [[ $# -ge 3 ]] || { echo "$0: --sizes needs a list" >&2; exit 2; }
  sizes=$3
fi

export MALLOC_MMAP_MAX_=0
export MALLOC_TRIM_THRESHOLD_=17179869184
export MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1
unset AM_COORDINATOR AM_NUM_PROCESSES AM_PROCESS_ID AM_HEARTBEAT_INTERVAL AM_HEARTBEAT_TIMEOUT

launcher="$build/tools/actormesh"
bench="$build/bench"
for exe in "$launcher" "$bench/bench_multihost_utils" "$bench/mpi_peers"; do
  [[ -x "$exe" ]] || { echo "$0: $exe is missing (build it first)" >&2; exit 2; }
done
command -v mpirun > /dev/null || { echo "$0: mpirun is missing (libopenmpi-dev, openmpi-bin)" >&2; exit 2; }
mpi_root=()
[[ $(id -u) -eq 0 ]] && mpi_root=(--allow-run-as-root)

log=$(mktemp /tmp/am_collectives_matrix.XXXXXX)
trap 'rm -f "$log"' EXIT

# value NAME: the last "RESULT NAME value" of the last run (the launcher prefixes "[i] "), or n/a.
value() {
  local v
  v=$(sed -n "s/^\(\[[0-9]*\] \)\{0,1\}RESULT $1 //p" "$log" | tail -n 1)
  echo "${v:-n/a}"
}

# ratio PEER OURS: PEER / OURS with two decimals, or n/a.
ratio() {
  awk -v p="$1" -v o="$2" 'BEGIN { if (p != "n/a" && o != "n/a" && o > 0) printf "%.2f", p / o; else print "n/a" }'
}

rows=()
for spec in $sizes; do
  n=${spec%%:*}
  bytes=${spec##*:}
  rounds=500
  ((bytes >= 1048576)) && rounds=20
  warmup=$((rounds / 10 + 2))
  common=(--bytes "$bytes" --warmup "$warmup" --rounds "$rounds")
  echo "-- $n processes, $bytes bytes: ours"
  timeout -k 5 300 "$launcher" launch -n "$n" --cpu-devices 1 --timeout 280 -- \
    "$bench/bench_multihost_utils" "${common[@]}" > "$log" 2>&1 || echo "   (ours: exit status $?)"
  ours_gather=$(value comm_allgather_us)
  ours_bcast=$(value comm_bcast_us)
  ours_sum=$(value comm_allreduce_us)
  declare -A mpi=()
  for btl in tcp vader; do
    for op in allgather bcast sum; do
      echo "-- $n processes, $bytes bytes: MPI $op over $btl"
      timeout -k 5 200 mpirun "${mpi_root[@]}" --oversubscribe --bind-to none --mca pml ob1 \
        --mca btl "$btl,self" -x MALLOC_MMAP_MAX_ -x MALLOC_TRIM_THRESHOLD_ -np "$n" \
        "$bench/mpi_peers" "$op" "${common[@]}" > "$log" 2>&1 || echo "   (MPI: exit status $?)"
      mpi[$op.$btl]=$(value "mpi_${op}_us")
    done
  done
  for op in allgather bcast sum; do
    case $op in
      allgather) ours=$ours_gather name=all_gather ;;
      bcast) ours=$ours_bcast name=broadcast ;;
      sum) ours=$ours_sum name="all_reduce (f32 sum)" ;;
    esac
    rows+=("$(printf '| %-20s | %3d | %8d | %9s | %9s | %9s | %6s | %6s |' "$name" "$n" "$bytes" "$ours" \
      "${mpi[$op.tcp]}" "${mpi[$op.vader]}" "$(ratio "${mpi[$op.tcp]}" "$ours")" "$(ratio "${mpi[$op.vader]}" "$ours")")")
  done
  unset mpi
done

echo
echo "| operation            |   n |    bytes |  ours us  |  MPI TCP  |  MPI shm  | vs TCP | vs shm |"
echo "|----------------------|-----|----------|-----------|-----------|-----------|--------|--------|"
printf '%s\n' "${rows[@]}"
echo "(ratios: MPI's time / ours, higher is better; each figure the slowest process's median)"
