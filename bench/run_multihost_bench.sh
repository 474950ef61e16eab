#!/usr/bin/env bash
# The multihost utilities benchmarks, each beside its peer in the same run, as
# one table:
#
#   process_allgather, 1 KiB and 64 MiB, 4 processes     bench_multihost_utils  vs MPI_Allgather over TCP
#   broadcast_one_to_all, 1 KiB and 64 MiB, 4 processes  bench_multihost_utils  vs MPI_Bcast over TCP
#   save_checkpoint / restore_checkpoint, 4 processes     bench_multihost_checkpoint
#                                                         vs one write (read) per file, same blocks
#
# and the engine alone (a communicator's all_gather and broadcast of the same bytes, without the
# utilities' tree agreement) as a decomposition against the same MPI figures. Ratios: for times
# peer/ours (a speed, higher is better, as the target "at least 0.8x Open MPI" reads), for rates
# ours/peer. The whole run takes about a minute; --quick less.
#
# Builds nothing: give it a build directory (configured with -DAM_BUILD_BENCH=ON) with the targets
# actormesh_tool, bench_multihost_utils, bench_multihost_checkpoint and (with Open MPI) mpi_peers.
# Every process is bounded by `timeout` and the launcher's --timeout, so the script always ends.
#
#   bench/run_multihost_bench.sh build-bench [--quick]
#
# The allocator settings and Open MPI's command line are bench_common.sh's; Open MPI runs over the
# tcp and self BTLs. Set AM_BENCH_FRESH_PAGES=1 to leave jemalloc's default (the utilities return
# fresh arrays, and without the setting every 64 MiB result is fresh pages, several times slower:
# doc/performance.md, "Multihost utilities and checkpoints").
set -u

if [[ $# -lt 1 || ! -d "$1" ]]; then
  echo "usage: $0 BUILD_DIR [--quick]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
quick=0
[[ "${2:-}" == "--quick" ]] && quick=1

source "$(dirname "$0")/bench_common.sh"
bench_quiet_allocators

launcher="$build/tools/actormesh"
bench="$build/bench"
bench_require "$launcher" "$bench/bench_multihost_utils" "$bench/bench_multihost_checkpoint"
have_mpi=1
if ! bench_mpi_available "$build"; then
  have_mpi=0
  echo "note: no mpi_peers or mpirun: the MPI peers are skipped"
fi

if ((quick)); then
  small_rounds=200 large_rounds=5 ckpt_rounds=3
else
  small_rounds=1000 large_rounds=10 ckpt_rounds=5
fi
procs=4

log=$(mktemp /tmp/am_multihost_bench.XXXXXX)
trap 'rm -f "$log"' EXIT

# run LABEL SECONDS COMMAND...: runs a command bounded by SECONDS, keeps its output in $log and
# shows its human-readable lines.
run() {
  local label=$1 limit=$2
  shift 2
  echo "-- $label"
  timeout -k 5 "$limit" "$@" > "$log" 2>&1
  local rc=$?
  grep -v 'RESULT ' "$log" | sed 's/^/   /'
  ((rc != 0)) && echo "   ($label: exit status $rc)"
  return 0
}

# result NAME: the value of the last "RESULT NAME value" line of the last run, or "n/a".
result() { bench_result "$log" "$1"; }

launch=("$launcher" launch --cpu-devices 1)
mpi=("${bench_mpi[@]}" --mca btl tcp,self)

rows=()
extra=()
# row TABLE MEASURE OURS OURS_EXTRA PEER_NAME PEER PEER_EXTRA KIND TARGET: one row of table "main"
# or "extra"; KIND "time" (ratio peer/ours) or "rate" (ours/peer), met when the ratio >= TARGET
# ("-": no target).
row() {
  local table=$1 measure=$2 ours=$3 ours_extra=$4 peer_name=$5 peer=$6 peer_extra=$7 kind=$8 target=$9
  local ratio=n/a verdict=-
  if [[ $ours != n/a && $peer != n/a ]]; then
    ratio=$(awk -v a="$ours" -v b="$peer" -v k="$kind" \
      'BEGIN { x = (k == "time") ? b / a : a / b; if (a > 0 && b > 0) printf "%.2f", x; else print "n/a" }')
    if [[ $target != - && $ratio != n/a ]]; then
      verdict=$(awk -v r="$ratio" -v t="$target" 'BEGIN { print (r >= t) ? "met" : "MISSED" }')
    fi
  fi
  local tgt=-
  [[ $target != - ]] && tgt=">= ${target}x"
  local line="| $measure | $ours${ours_extra:+ ($ours_extra)} | $peer_name: $peer${peer_extra:+ ($peer_extra)} | $ratio | $tgt | $verdict |"
  if [[ $table == main ]]; then rows+=("$line"); else extra+=("$line"); fi
}

echo "actormesh multihost utilities benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), MALLOC_CONF=${MALLOC_CONF:-unset}"

# 1. process_allgather and broadcast_one_to_all, 1 KiB and 64 MiB, against MPI over TCP.
for bytes in 1024 67108864; do
  if ((bytes < 1048576)); then size="1 KiB" rounds=$small_rounds unit=us; else size="64 MiB" rounds=$large_rounds unit=us; fi
  run "multihost utilities, $size, $procs processes (actormesh)" 300 "${launch[@]}" -n "$procs" --timeout 290 -- \
    "$bench/bench_multihost_utils" --bytes "$bytes" --rounds "$rounds"
  declare -A ours=()
  for k in mh_allgather mh_bcast comm_allgather comm_bcast; do
    ours[$k]=$(result ${k}_us)
    ours[${k}_range]="$(result ${k}_p10_us)-$(result ${k}_p90_us)"
  done
  gather=n/a gather_range= bcast=n/a bcast_range=
  if ((have_mpi)); then
    run "MPI_Allgather, $size, $procs ranks, TCP" 300 "${mpi[@]}" -np "$procs" "$bench/mpi_peers" allgather \
      --bytes "$bytes" --rounds "$rounds"
    gather=$(result mpi_allgather_us)
    gather_range="$(result mpi_allgather_p10_us)-$(result mpi_allgather_p90_us)"
    run "MPI_Bcast, $size, $procs ranks, TCP" 300 "${mpi[@]}" -np "$procs" "$bench/mpi_peers" bcast \
      --bytes "$bytes" --rounds "$rounds"
    bcast=$(result mpi_bcast_us)
    bcast_range="$(result mpi_bcast_p10_us)-$(result mpi_bcast_p90_us)"
  fi
  row main "process_allgather $size, $procs processes, median $unit (p10-p90)" "${ours[mh_allgather]}" \
    "${ours[mh_allgather_range]}" "MPI_Allgather TCP" "$gather" "$gather_range" time 0.8
  row main "broadcast_one_to_all $size, $procs processes, median $unit (p10-p90)" "${ours[mh_bcast]}" \
    "${ours[mh_bcast_range]}" "MPI_Bcast TCP" "$bcast" "$bcast_range" time 0.8
  row extra "communicator all_gather $size (engine alone), us" "${ours[comm_allgather]}" "${ours[comm_allgather_range]}" \
    "MPI_Allgather TCP" "$gather" "" time -
  row extra "communicator broadcast $size (engine alone), us" "${ours[comm_bcast]}" "${ours[comm_bcast_range]}" \
    "MPI_Bcast TCP" "$bcast" "" time -
  unset ours
done

# 2. Checkpoints of 256 MiB over 4 processes of 2 devices, against one write (read) per file.
run "checkpoint 256 MiB, $procs processes x 2 devices" 300 "$launcher" launch --cpu-devices 2 -n "$procs" \
  --timeout 290 -- "$bench/bench_multihost_checkpoint" --mib 256 --rounds "$ckpt_rounds"
row main "save_checkpoint 256 MiB, GB/s (range)" "$(result ckpt_save_gbs)" \
  "$(result ckpt_save_min_gbs)-$(result ckpt_save_max_gbs)" "one write per file" "$(result posix_write_gbs)" \
  "$(result posix_write_min_gbs)-$(result posix_write_max_gbs)" rate -
row main "restore_checkpoint 256 MiB, GB/s (range)" "$(result ckpt_restore_gbs)" \
  "$(result ckpt_restore_min_gbs)-$(result ckpt_restore_max_gbs)" "one read per file" "$(result posix_read_gbs)" \
  "$(result posix_read_min_gbs)-$(result posix_read_max_gbs)" rate -

echo
echo "| measure | actormesh | peer (same run) | ratio | target | |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "Decomposition (no targets): the collectives engine alone, against the same MPI figures"
echo
echo "| measure | figure | peer (same run) | ratio | target | |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${extra[@]}"
echo
echo "Ratios: peer time / ours (speed relative to Open MPI; higher is better), or ours/peer for rates."
echo "Times are the slowest process's median (a broadcast's root may return before the others have the bytes)."
echo "Load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
