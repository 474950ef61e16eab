#!/usr/bin/env bash
# The cluster benchmarks, each beside its peer in the same run, as one table:
#
#   barrier at 2, 4, 8 processes      bench_cluster_barrier      vs MPI_Barrier over TCP (mpi_peers)
#   64 MiB float32 all-reduce, 4 and 2 processes, bus bandwidth
#                                     bench_cluster_allreduce    vs MPI_Allreduce over TCP and shared memory
#   256 MiB shard transfer, 2 processes
#                                     bench_cluster_transfer     vs plain loopback TCP (tcp_peer)
#   remote call round trip (single-controller: controller -> worker device -> answer), and the
#   store round trip                  bench_cluster_remote_call, bench_cluster_store
#                                                                vs a raw CAF remote request (caf_peer)
#   failure detection (SIGKILL, SIGSTOP; heartbeat 200ms/2s and the defaults)
#                                     bench_cluster_detect       vs their bounds
#
# and a second table without targets that takes the barrier apart, each way against the same
# MPI_Barrier figure: a central barrier actor over bare CAF (caf_peer barrier), gloo::barrier over a
# Gloo TCP mesh (bench_cluster_gloo_barrier), and a dissemination barrier that the calling threads
# run over blocking loopback sockets (tcp_peer barrier). Ratios are ours/peer. The whole run takes
# about 2 minutes (the default heartbeat's SIGSTOP runs take 20 s each); --quick about 45 s.
#
# Builds nothing: give it a build directory that has the targets actormesh_tool, bench_cluster_*
# (barrier, gloo_barrier, allreduce, transfer, store, remote_call, detect), tcp_peer, caf_peer and (with Open
# MPI) mpi_peers. Every process started here is bounded by
# `timeout` (and the launcher's --timeout), so the script always ends by itself.
#
#   bench/run_cluster_bench.sh build-bench [--quick]
#
# The allocator settings (Open MPI needs them for large buffers, doc/performance.md, "Cluster", and
# the comparison is only fair when both sides have them) and Open MPI's command line (ob1, so that
# the btl list is obeyed rather than UCX's own transports; no binding, as ours are not bound;
# --oversubscribe) are bench_common.sh's.
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
bench_require "$launcher" "$bench/bench_cluster_barrier" "$bench/bench_cluster_gloo_barrier" "$bench/bench_cluster_allreduce" \
  "$bench/bench_cluster_transfer" "$bench/bench_cluster_store" "$bench/bench_cluster_remote_call" "$bench/bench_cluster_detect" \
  "$bench/tcp_peer" "$bench/caf_peer"
have_mpi=1
if ! bench_mpi_available "$build"; then
  have_mpi=0
  echo "note: no mpi_peers or mpirun: the MPI peers are skipped"
fi

if ((quick)); then
  barrier_rounds=500 ar_rounds=5 xfer_rounds=4 rtt_rounds=2000 detect_runs=3 default_stop_runs=1
else
  barrier_rounds=2000 ar_rounds=10 xfer_rounds=8 rtt_rounds=5000 detect_runs=5 default_stop_runs=3
fi

log=$(mktemp /tmp/am_cluster_bench.XXXXXX)
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

# The two launchers, as command prefixes (timeout runs programs, not shell functions).
launch=("$launcher" launch --cpu-devices 1)
mpi=("${bench_mpi[@]}")

rows=()
# row MEASURE OURS PEER_NAME PEER RATIO_KIND TARGET [OURS_EXTRA PEER_EXTRA]: one table row;
# RATIO_KIND "time" (ours/peer, lower is better: met when <= TARGET) or "rate" (ours/peer, met when
# >= TARGET); TARGET "-" for none; the extras (a range) are shown after the figures.
row() {
  local measure=$1 ours=$2 peer_name=$3 peer=$4 kind=$5 target=$6 ours_extra=${7:-} peer_extra=${8:-}
  local ratio=n/a verdict=-
  if [[ $ours != n/a && $peer != n/a && $peer != - ]]; then
    ratio=$(awk -v a="$ours" -v b="$peer" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
    if [[ $target != - && $ratio != n/a ]]; then
      verdict=$(awk -v r="$ratio" -v t="$target" -v k="$kind" \
        'BEGIN { ok = (k == "time") ? (r <= t) : (r >= t); print ok ? "met" : "MISSED" }')
    fi
  fi
  local tgt=-
  [[ $target != - ]] && tgt=$([[ $kind == time ]] && echo "<= ${target}x" || echo ">= ${target}x")
  rows+=("| $measure | $ours${ours_extra:+ ($ours_extra)} | $peer_name: $peer${peer_extra:+ ($peer_extra)} | $ratio | $tgt | $verdict |")
}
# xrow: as row, into the decomposition table (no targets).
extra=()
xrow() {
  row "$@"
  extra+=("${rows[-1]}")
  unset 'rows[-1]'
}

echo "actormesh cluster benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. Barriers.
for n in 2 4 8; do
  run "barrier, $n processes (actormesh)" 120 "${launch[@]}" -n "$n" --timeout 110 -- "$bench/bench_cluster_barrier" \
    --rounds "$barrier_rounds"
  ours=$(result am_barrier_us)
  ours_range="$(result am_barrier_p10_us)-$(result am_barrier_p90_us)"
  peer=n/a peer_range=
  if ((have_mpi)); then
    run "barrier, $n processes (MPI_Barrier, TCP)" 120 "${mpi[@]}" -np "$n" --mca btl tcp,self "$bench/mpi_peers" \
      barrier --rounds "$barrier_rounds"
    peer=$(result mpi_barrier_us)
    peer_range="$(result mpi_barrier_p10_us)-$(result mpi_barrier_p90_us)"
  fi
  row "barrier, $n processes, median us (p10-p90)" "$ours" "MPI_Barrier TCP" "$peer" time 1.0 "$ours_range" "$peer_range"
  # Decomposition: the same barrier through bare CAF (one central actor), through Gloo, and done
  # by the calling threads over plain sockets (dissemination), each against the same MPI figure.
  run "barrier, $n processes (raw CAF central barrier)" 120 "$bench/caf_peer" barrier --processes "$n" \
    --rounds "$barrier_rounds"
  xrow "barrier, $n processes: raw CAF central actor, us" "$(result caf_barrier_us)" "MPI_Barrier TCP" "$peer" time - \
    "$(result caf_barrier_p10_us)-$(result caf_barrier_p90_us)"
  run "barrier, $n processes (gloo::barrier over TCP)" 120 "${launch[@]}" -n "$n" --timeout 110 -- \
    "$bench/bench_cluster_gloo_barrier" --rounds "$barrier_rounds"
  xrow "barrier, $n processes: gloo::barrier TCP mesh, us" "$(result gloo_barrier_us)" "MPI_Barrier TCP" "$peer" time - \
    "$(result gloo_barrier_p10_us)-$(result gloo_barrier_p90_us)"
  run "barrier, $n processes (dissemination over blocking TCP)" 120 "$bench/tcp_peer" barrier --processes "$n" \
    --rounds "$barrier_rounds"
  xrow "barrier, $n processes: calling threads, blocking TCP, us" "$(result tcp_barrier_us)" "MPI_Barrier TCP" "$peer" \
    time - "$(result tcp_barrier_p10_us)-$(result tcp_barrier_p90_us)"
done

# 2. All-reduce, 64 MiB float32, as bus bandwidth.
for n in 4 2; do
  run "all-reduce 64 MiB, $n processes (actormesh, Gloo)" 200 "${launch[@]}" -n "$n" --timeout 190 -- \
    "$bench/bench_cluster_allreduce" --rounds "$ar_rounds"
  ours=$(result am_allreduce_busbw)
  tcp=n/a shm=n/a
  if ((have_mpi)); then
    run "all-reduce 64 MiB, $n processes (MPI_Allreduce, TCP)" 200 "${mpi[@]}" -np "$n" --mca btl tcp,self \
      "$bench/mpi_peers" allreduce --rounds "$ar_rounds"
    tcp=$(result mpi_allreduce_busbw)
    run "all-reduce 64 MiB, $n processes (MPI_Allreduce, shared memory)" 200 "${mpi[@]}" -np "$n" --mca btl vader,self \
      "$bench/mpi_peers" allreduce --rounds "$ar_rounds"
    shm=$(result mpi_allreduce_busbw)
  fi
  if ((n == 4)); then
    row "all-reduce 64 MiB f32, 4 processes, bus GB/s" "$ours" "MPI TCP" "$tcp" rate 1.0
    row "all-reduce 64 MiB f32, 4 processes, bus GB/s" "$ours" "MPI shared memory" "$shm" rate 0.8
  else
    row "all-reduce 64 MiB f32, 2 processes, bus GB/s" "$ours" "MPI TCP" "$tcp" rate -
    row "all-reduce 64 MiB f32, 2 processes, bus GB/s" "$ours" "MPI shared memory" "$shm" rate -
  fi
done

# 3. Shard transfer, 256 MiB between two processes.
run "transfer 256 MiB (actormesh send/recv, Gloo)" 200 "${launch[@]}" -n 2 --timeout 190 -- "$bench/bench_cluster_transfer" \
  --rounds "$xfer_rounds"
ours=$(result am_transfer_gbs)
run "transfer 256 MiB (loopback TCP)" 200 "$bench/tcp_peer" --rounds "$xfer_rounds"
peer=$(result tcp_transfer_gbs)
row "shard transfer 256 MiB, GB/s" "$ours" "loopback TCP" "$peer" rate 0.8

# 4. Remote round trips: the single-controller device call (the figure with a target), then a fetch of one
# element and the store's request, all against the same raw CAF request.
run "raw CAF remote request" 120 "$bench/caf_peer" --rounds "$rtt_rounds"
peer=$(result caf_rtt_us)
peer_range="$(result caf_rtt_p10_us)-$(result caf_rtt_p90_us)"
run "remote device call (actormesh, single-controller)" 120 "${launch[@]}" -n 2 --timeout 110 -- \
  "$bench/bench_cluster_remote_call" --rounds "$rtt_rounds"
ours=$(result am_remote_call_rtt_us)
ours_range="$(result am_remote_call_rtt_p10_us)-$(result am_remote_call_rtt_p90_us)"
row "remote device call, median us (p10-p90)" "$ours" "raw CAF request" "$peer" time 1.2 "$ours_range" "$peer_range"
ours=$(result am_remote_fetch_rtt_us)
ours_range="$(result am_remote_fetch_rtt_p10_us)-$(result am_remote_fetch_rtt_p90_us)"
row "remote to_host of one element, median us (p10-p90)" "$ours" "raw CAF request" "$peer" time 1.2 "$ours_range" "$peer_range"
run "store round trip (actormesh)" 120 "${launch[@]}" -n 2 --timeout 110 -- "$bench/bench_cluster_store" --rounds "$rtt_rounds"
ours=$(result am_store_rtt_us)
ours_range="$(result am_store_rtt_p10_us)-$(result am_store_rtt_p90_us)"
row "store round trip, median us (p10-p90)" "$ours" "raw CAF request" "$peer" time 1.2 "$ours_range" "$peer_range"

# 5. Failure detection, as the survivors see it (median over runs, range).
detect() {
  local label=$1 runs=$2 sig=$3 bound_ms=$4 limit=$5
  shift 5
  run "detection: $label" "$limit" env "$@" "$bench/bench_cluster_detect" --signal "$sig" --runs "$runs"
  local med
  med=$(result detect_ms)
  local range="$(result detect_min_ms)-$(result detect_max_ms)"
  local verdict=-
  [[ $med != n/a ]] && verdict=$(awk -v m="$med" -v b="$bound_ms" 'BEGIN { print (m <= b) ? "met" : "MISSED" }')
  rows+=("| detection: $label, ms | $med ($range) | bound: $bound_ms | - | <= $bound_ms ms | $verdict |")
}
fast=(AM_HEARTBEAT_INTERVAL=200ms AM_HEARTBEAT_TIMEOUT=2s)
detect "killed (SIGKILL), heartbeat 200ms/2s" "$detect_runs" 9 1000 120 "${fast[@]}"
detect "killed (SIGKILL), default heartbeat" "$detect_runs" 9 1000 120
detect "stopped (SIGSTOP), heartbeat 200ms/2s" "$detect_runs" 19 2000 200 "${fast[@]}"
# The default heartbeat timeout is 20 s (devices/options.hpp): each run takes that long.
detect "stopped (SIGSTOP), default heartbeat (20s)" "$default_stop_runs" 19 20000 $((default_stop_runs * 60 + 60))

echo
echo "| measure | actormesh | peer (same run) | ratio | target | |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "Decomposition (no targets): other ways to the same barrier, against the same MPI_Barrier figure"
echo
echo "| measure | figure | peer (same run) | ratio | target | |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${extra[@]}"
echo
echo "Remote device call: the controller runs a one-element program on the worker's device and waits for"
echo "  its output; store round trip: blocking_key_value_get of a set key from process 1, one CAF request and"
echo "  answer through the cluster client. Ratios: ours/peer (times: lower is better; rates: higher)."
echo "Issue anchors (measured earlier on this machine): MPI_Barrier TCP 140 us at 4; MPI_Allreduce 0.65 GB/s TCP,"
echo "2.5 GB/s shared memory; loopback TCP 1.4 GB/s; raw CAF request 104 us. Load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
