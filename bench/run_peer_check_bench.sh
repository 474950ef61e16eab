#!/usr/bin/env bash
# Barriers and small collectives whose participants check each other (issue 24): each figure from
# this build (checks over shared memory, and again over TCP as between machines), optionally from an
# earlier build, and from Open MPI, run
# alternately RUNS times in the same minutes; prints every figure's median and range over the runs
# and the ratios of the medians.
#
#   barrier at 2, 4, 8 processes            bench_cluster_barrier         vs MPI_Barrier (TCP; shared memory)
#   all_gather and broadcast of 1 KiB       bench_multihost_utils         vs MPI_Allgather, MPI_Bcast (TCP)
#     across 4 processes                     (a communicator's, and the
#                                            multihost utilities')
#
# Builds nothing: give it build directories (Release, -DAM_BUILD_BENCH=ON) with actormesh_tool,
# bench_cluster_barrier, bench_multihost_utils and mpi_peers. Every process is bounded by `timeout`
# and the launcher's --timeout, so the script always ends.
#
#   bench/run_peer_check_bench.sh BUILD [BEFORE_BUILD] [RUNS]
set -u

if [[ $# -lt 1 || ! -d "$1" ]]; then
  echo "usage: $0 BUILD [BEFORE_BUILD] [RUNS]" >&2
  exit 2
fi
builds=("$(cd "$1" && pwd)")
names=(now)
checks=(auto) # AM_COLLECTIVE_CHECKS: auto (shared memory on one machine) or tcp (the path between machines)
builds+=("${builds[0]}")
names+=("now, TCP checks")
checks+=(tcp)
if [[ $# -ge 2 && -d "$2" ]]; then
  builds+=("$(cd "$2" && pwd)")
  names+=(before)
  checks+=(auto)
fi
runs=${3:-3}
rounds=1000

source "$(dirname "$0")/bench_common.sh"
bench_quiet_allocators

for b in "${builds[@]}"; do
  bench_require "$b/tools/actormesh" "$b/bench/bench_cluster_barrier" "$b/bench/bench_multihost_utils"
done
have_mpi=1
if ! bench_mpi_available "${builds[0]}"; then
  have_mpi=0
  echo "note: no mpi_peers or mpirun: the MPI peers are skipped"
fi
mpi=("${bench_mpi[@]}")

log=$(mktemp /tmp/am_peer_check_bench.XXXXXX)
trap 'rm -f "$log"' EXIT
declare -A figures=() # "<figure>|<who>" -> space-separated values, one per run

# sample FIGURE WHO RESULT_NAME SECONDS COMMAND...: runs the command (bounded) and keeps the last
# "RESULT RESULT_NAME value" line's value (launch prefixes lines with "[i] ").
sample() {
  local figure=$1 who=$2 name=$3 limit=$4
  shift 4
  timeout -k 5 "$limit" "$@" > "$log" 2>&1
  local v
  v=$(bench_result "$log" "$name")
  if [[ $v == n/a ]]; then
    echo "   ($figure, $who: no result; exit or output follows)" >&2
    tail -n 5 "$log" | sed 's/^/     /' >&2
    return 0
  fi
  figures["$figure|$who"]+="$v "
}

echo "actormesh peer-checked barriers and collectives, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
  "load $(cut -d' ' -f1-3 /proc/loadavg), $runs runs"
order=()
for ((run = 1; run <= runs; ++run)); do
  echo "-- run $run of $runs"
  for n in 2 4 8; do
    f="barrier, $n processes, us"
    [[ $run == 1 ]] && order+=("$f")
    for k in "${!builds[@]}"; do
      sample "$f" "${names[$k]}" am_barrier_us 120 env AM_COLLECTIVE_CHECKS="${checks[$k]}" "${builds[$k]}/tools/actormesh" launch --cpu-devices 1 -n "$n" \
        --timeout 110 -- "${builds[$k]}/bench/bench_cluster_barrier" --rounds 2000
    done
    if ((have_mpi)); then
      sample "$f" "MPI TCP" mpi_barrier_us 120 "${mpi[@]}" -np "$n" --mca btl tcp,self "${builds[0]}/bench/mpi_peers" \
        barrier --rounds 2000
      sample "$f" "MPI shm" mpi_barrier_us 120 "${mpi[@]}" -np "$n" --mca btl vader,self \
        "${builds[0]}/bench/mpi_peers" barrier --rounds 2000
    fi
  done
  fg="all_gather 1 KiB, 4 processes, us" fb="broadcast 1 KiB, 4 processes, us"
  mg="process_allgather 1 KiB, 4 processes, us" mb="broadcast_one_to_all 1 KiB, 4 processes, us"
  [[ $run == 1 ]] && order+=("$fg" "$fb" "$mg" "$mb")
  for k in "${!builds[@]}"; do
    timeout -k 5 300 env AM_COLLECTIVE_CHECKS="${checks[$k]}" "${builds[$k]}/tools/actormesh" launch --cpu-devices 1 -n 4 --timeout 290 -- \
      "${builds[$k]}/bench/bench_multihost_utils" --bytes 1024 --rounds "$rounds" > "$log" 2>&1
    for pair in "$fg:comm_allgather_us" "$fb:comm_bcast_us" "$mg:mh_allgather_us" "$mb:mh_bcast_us"; do
      v=$(bench_result "$log" "${pair##*:}")
      [[ $v != n/a ]] && figures["${pair%%:*}|${names[$k]}"]+="$v "
    done
  done
  if ((have_mpi)); then
    sample "$fg" "MPI TCP" mpi_allgather_us 300 "${mpi[@]}" -np 4 --mca btl tcp,self "${builds[0]}/bench/mpi_peers" \
      allgather --bytes 1024 --rounds "$rounds"
    figures["$mg|MPI TCP"]=${figures["$fg|MPI TCP"]}
    sample "$fb" "MPI TCP" mpi_bcast_us 300 "${mpi[@]}" -np 4 --mca btl tcp,self "${builds[0]}/bench/mpi_peers" \
      bcast --bytes 1024 --rounds "$rounds"
    figures["$mb|MPI TCP"]=${figures["$fb|MPI TCP"]}
  fi
done

# stats VALUES: "median (min-max)" of the values.
stats() {
  tr ' ' '\n' <<< "$1" | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "n/a"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.1f (%.1f-%.1f)\n", m, v[1], v[NR] }'
}
median() { stats "$1" | cut -d' ' -f1; }

echo
echo "| figure | now | now, TCP checks | before | MPI TCP | MPI shm | now/MPI TCP | now/MPI shm | TCP checks/MPI TCP | now/before |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for f in "${order[@]}"; do
  now=${figures["$f|now"]:-} over_tcp=${figures["$f|now, TCP checks"]:-} before=${figures["$f|before"]:-}
  tcp=${figures["$f|MPI TCP"]:-} shm=${figures["$f|MPI shm"]:-}
  echo "| $f | $(stats "$now") | $(stats "$over_tcp") | $(stats "$before") | $(stats "$tcp") | $(stats "$shm") |" \
    "$(bench_ratio "$(median "$now")" "$(median "$tcp")") | $(bench_ratio "$(median "$now")" "$(median "$shm")") |" \
    "$(bench_ratio "$(median "$over_tcp")" "$(median "$tcp")") | $(bench_ratio "$(median "$now")" "$(median "$before")") |"
done
echo
echo "Ratios are times, ours over the peer's: lower is better (issue 24's targets: barrier <= 1.0x MPI over TCP"
echo "and <= 1.5x MPI's shared memory; 1 KiB all-gather and broadcast at least 0.8x MPI's speed, i.e. <= 1.25x here)."
