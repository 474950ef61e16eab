# The set-up the multi-process benchmark scripts share (sourced, not run): the allocator variables,
# a clean cluster environment, the Open MPI command line and the readers of a run's RESULT lines.
#
#   source "$(dirname "$0")/bench_common.sh"
#   bench_quiet_allocators          # before starting anything
#   bench_require EXE...            # exits 2 naming the first that is missing
#   bench_mpi_available BUILD_DIR   # true when mpi_peers and mpirun are both there
#   mpi=("${bench_mpi[@]}" --mca btl tcp,self -np 4 ...)
#   bench_result LOG NAME           # the last "RESULT NAME value" of LOG, or n/a
#   bench_ratio A B                 # A / B with two decimals, or n/a

# Every process (ours and Open MPI's) runs with MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=16 GiB:
# glibc then keeps freed memory, so a reused buffer is not first-touched again (a page fault per
# page; doc/performance.md, "Cluster"). libactormesh allocates through jemalloc, which ignores those
# variables; its equivalent, MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1, is set too, unless
# AM_BENCH_FRESH_PAGES=1 asks for jemalloc's default. A benchmark never joins a cluster the caller's
# environment names: the launcher gives each process its own.
bench_quiet_allocators() {
  export MALLOC_MMAP_MAX_=0
  export MALLOC_TRIM_THRESHOLD_=17179869184
  [[ "${AM_BENCH_FRESH_PAGES:-0}" == 1 ]] || export MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1
  unset AM_COORDINATOR AM_NUM_PROCESSES AM_PROCESS_ID AM_HEARTBEAT_INTERVAL AM_HEARTBEAT_TIMEOUT
}

# bench_require EXE...: exits with status 2 naming the first executable that is not there.
bench_require() {
  local exe
  for exe in "$@"; do
    [[ -x "$exe" ]] || { echo "$0: $exe is missing (build it first)" >&2; exit 2; }
  done
}

# bench_mpi_available BUILD_DIR: whether the MPI peers can run (BUILD_DIR/bench/mpi_peers and mpirun).
bench_mpi_available() {
  [[ -x "$1/bench/mpi_peers" ]] && command -v mpirun > /dev/null
}

# Open MPI's command line without the transport and the ranks: ob1, no binding, oversubscribed
# (more ranks than cores), run as root where we are root, the allocator variables passed on.
bench_mpi=(mpirun --oversubscribe --bind-to none --mca pml ob1 -x MALLOC_MMAP_MAX_ -x MALLOC_TRIM_THRESHOLD_)
[[ $(id -u) -eq 0 ]] && bench_mpi+=(--allow-run-as-root)

# bench_result LOG NAME: the value of the last "RESULT NAME value" line in LOG (the launcher prefixes
# each line with "[i] "), or n/a.
bench_result() {
  local v
  v=$(sed -n "s/^\(\[[0-9]*\] \)\{0,1\}RESULT $2 //p" "$1" | tail -n 1)
  echo "${v:-n/a}"
}

# bench_ratio A B: A / B with two decimals, or n/a when either is n/a or B is not positive.
bench_ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a != "n/a" && b != "n/a" && b > 0) printf "%.2f", a / b; else print "n/a" }'
}
