#!/usr/bin/env bash
# The small and medium collectives of issue 24 (item 4), each beside Open MPI in the same run:
# a communicator's all_gather, broadcast and float32-sum all_reduce (bench_multihost_utils, the
# engine alone) against MPI_Allgather, MPI_Bcast and MPI_Allreduce of the same bytes
# (mpi_peers allgather|bcast|sum), over TCP (`--mca btl tcp,self`) and shared memory
# (`--mca btl vader,self`), at
#
#   4 processes: 1 KiB, 64 KiB and 64 MiB;   16 and 32 processes: 1 KiB and 1 MiB
#
# (--sizes "N:BYTES ..." takes others), then two rows between 2 processes: a 256 MiB shard transfer
# (bench_cluster_transfer: a communicator's send/recv) against MPI_Send/MPI_Recv (mpi_peers send),
# and psum inside pmap of 1 KiB per device (bench_cluster_psum) against MPI_Allreduce of 1 KiB. One table: per operation and size our median, MPI's over
# TCP and over shared memory, and the speed ratios MPI time / ours (higher is better; the issue's
# target is at least 0.8x). Each figure is the slowest process's median over the rounds of one run;
# run the script several times for a range. Our side times calls back to back, MPI's after an
# untimed barrier each (bench/mpi_peers.cpp), as run_multihost_bench.sh does.
#
# Builds nothing: give it a build directory with the targets actormesh_tool, bench_multihost_utils,
# bench_cluster_transfer, bench_cluster_psum and mpi_peers. Every process is bounded by `timeout` and the launcher's own, so it always ends.
#
#   bench/run_collectives_matrix.sh build-bench [--sizes "4:1024 32:1048576"]
set -uo pipefail

if [[ $# -lt 1 || ! -d "$1" ]]; then
  echo "usage: $0 BUILD_DIR [--sizes \"N:BYTES ...\"]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
sizes="4:1024 4:65536 4:67108864 16:1024 16:1048576 32:1024 32:1048576"
if [[ "${2:-}" == "--sizes" ]]; then
  [[ $# -ge 3 ]] || { echo "$0: --sizes needs a list" >&2; exit 2; }
  sizes=$3
fi

source "$(dirname "$0")/bench_common.sh"
bench_quiet_allocators

launcher="$build/tools/actormesh"
bench="$build/bench"
bench_require "$launcher" "$bench/bench_multihost_utils" "$bench/bench_cluster_transfer" "$bench/bench_cluster_psum" \
  "$bench/mpi_peers"
command -v mpirun > /dev/null || { echo "$0: mpirun is missing (libopenmpi-dev, openmpi-bin)" >&2; exit 2; }

log=$(mktemp /tmp/am_collectives_matrix.XXXXXX)
trap 'rm -f "$log"' EXIT

rows=()
for spec in $sizes; do
  n=${spec%%:*}
  bytes=${spec##*:}
  rounds=500
  ((bytes >= 1048576)) && rounds=20
  ((bytes >= 67108864)) && rounds=5
  warmup=$((rounds / 10 + 2))
  common=(--bytes "$bytes" --warmup "$warmup" --rounds "$rounds")
  echo "-- $n processes, $bytes bytes: ours"
  timeout -k 5 300 "$launcher" launch -n "$n" --cpu-devices 1 --timeout 280 -- \
    "$bench/bench_multihost_utils" "${common[@]}" > "$log" 2>&1 || echo "   (ours: exit status $?)"
  ours_gather=$(bench_result "$log" comm_allgather_us)
  ours_bcast=$(bench_result "$log" comm_bcast_us)
  ours_sum=$(bench_result "$log" comm_allreduce_us)
  declare -A mpi=()
  for btl in tcp vader; do
    for op in allgather bcast sum; do
      echo "-- $n processes, $bytes bytes: MPI $op over $btl"
      timeout -k 5 200 "${bench_mpi[@]}" --mca btl "$btl,self" -np "$n" "$bench/mpi_peers" "$op" "${common[@]}" > "$log" 2>&1 || echo "   (MPI: exit status $?)"
      mpi[$op.$btl]=$(bench_result "$log" "mpi_${op}_us")
    done
  done
  for op in allgather bcast sum; do
    case $op in
      allgather) ours=$ours_gather name=all_gather ;;
      bcast) ours=$ours_bcast name=broadcast ;;
      sum) ours=$ours_sum name="all_reduce (f32 sum)" ;;
    esac
    rows+=("$(printf '| %-20s | %3d | %8d | %9s | %9s | %9s | %6s | %6s |' "$name" "$n" "$bytes" "$ours" \
      "${mpi[$op.tcp]}" "${mpi[$op.vader]}" "$(bench_ratio "${mpi[$op.tcp]}" "$ours")" "$(bench_ratio "${mpi[$op.vader]}" "$ours")")")
  done
  unset mpi
done

echo
echo "| operation            |   n |    bytes |  ours us  |  MPI TCP  |  MPI shm  | vs TCP | vs shm |"
echo "|----------------------|-----|----------|-----------|-----------|-----------|--------|--------|"
printf '%s\n' "${rows[@]}"
echo "(ratios: MPI's time / ours, higher is better; each figure the slowest process's median)"

# Two processes: a 256 MiB transfer (GB/s, the receiver's median) and psum in pmap at 1 KiB (us).
echo "-- 2 processes, 256 MiB transfer: ours"
timeout -k 5 200 "$launcher" launch -n 2 --cpu-devices 1 --timeout 190 -- "$bench/bench_cluster_transfer" --mib 256 \
  --rounds 8 > "$log" 2>&1 || echo "   (ours: exit status $?)"
ours_transfer=$(bench_result "$log" am_transfer_gbs)
echo "-- 2 processes, 1 KiB psum in pmap: ours"
timeout -k 5 200 "$launcher" launch -n 2 --cpu-devices 1 --timeout 190 -- "$bench/bench_cluster_psum" --bytes 1024 \
  --rounds 2000 > "$log" 2>&1 || echo "   (ours: exit status $?)"
ours_psum=$(bench_result "$log" pmap_psum_us)
declare -A peer=()
for btl in tcp vader; do
  echo "-- 2 processes, MPI over $btl: 256 MiB send, 1 KiB MPI_Allreduce"
  timeout -k 5 200 "${bench_mpi[@]}" --mca btl "$btl,self" -np 2 "$bench/mpi_peers" send --mib 256 --rounds 8 \
    > "$log" 2>&1 || echo "   (MPI: exit status $?)"
  peer[send.$btl]=$(bench_result "$log" mpi_send_gbs)
  timeout -k 5 200 "${bench_mpi[@]}" --mca btl "$btl,self" -np 2 "$bench/mpi_peers" sum --bytes 1024 --rounds 2000 \
    > "$log" 2>&1 || echo "   (MPI: exit status $?)"
  peer[sum.$btl]=$(bench_result "$log" mpi_sum_us)
done
echo
echo "| between 2 processes                  |    ours    |  MPI TCP   |  MPI shm   | vs TCP | vs shm |"
echo "|--------------------------------------|------------|------------|------------|--------|--------|"
printf '| %-36s | %10s | %10s | %10s | %6s | %6s |\n' "shard transfer 256 MiB, GB/s" "$ours_transfer" \
  "${peer[send.tcp]}" "${peer[send.vader]}" "$(bench_ratio "$ours_transfer" "${peer[send.tcp]}")" \
  "$(bench_ratio "$ours_transfer" "${peer[send.vader]}")"
printf '| %-36s | %10s | %10s | %10s | %6s | %6s |\n' "psum in pmap 1 KiB, us" "$ours_psum" "${peer[sum.tcp]}" \
  "${peer[sum.vader]}" "$(bench_ratio "${peer[sum.tcp]}" "$ours_psum")" "$(bench_ratio "${peer[sum.vader]}" "$ours_psum")"
echo "(ratios: speed relative to MPI, higher is better: ours/MPI for GB/s, MPI/ours for times)"
