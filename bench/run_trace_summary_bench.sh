#!/usr/bin/env bash
# `actormesh trace summary` on a large trace (bench/make_large_trace.py, 1,000,000 spans, about
# 157 MB), plain and gzipped, beside Python's json.load of the same file (the peer: reading the
# document alone, no summary), each run RUNS times (default 3): the median and range of the wall
# time and of the peak resident memory (/usr/bin/time). Builds nothing.
#
#   bench/run_trace_summary_bench.sh BUILD_DIR [RUNS]
set -uo pipefail
[[ $# -ge 1 && -x "$1/tools/actormesh" ]] || { echo "usage: $0 BUILD_DIR [RUNS]" >&2; exit 2; }
tool="$1/tools/actormesh"
runs=${2:-3}
command -v /usr/bin/time > /dev/null || { echo "$0: /usr/bin/time is missing (Debian's time package)" >&2; exit 2; }
dir=$(mktemp -d /tmp/am_trace_bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
python3 "$(dirname "$0")/make_large_trace.py" "$dir/big.json"
gzip -1 -k "$dir/big.json"
echo "trace: $(stat -c %s "$dir/big.json") bytes, gzipped $(stat -c %s "$dir/big.json.gz")"

# Median and range of a list of numbers.
summary() { sort -g | awk '{v[NR]=$1} END {printf "%s (%s-%s)", v[int((NR+1)/2)], v[1], v[NR]}'; }

measure() { # label, command...
  local label=$1; shift
  local times=() rss=()
  for ((i = 0; i < runs; i++)); do
    local out
    out=$( { timeout 600 /usr/bin/time -f "%e %M" "$@" > /dev/null; } 2>&1 | tail -1)
    times+=("${out% *}")
    rss+=("$(( ${out#* } / 1024 ))")
  done
  printf '| %-34s | %20s | %20s |\n' "$label" "$(printf '%s\n' "${times[@]}" | summary)" \
    "$(printf '%s\n' "${rss[@]}" | summary)"
}

printf '| %-34s | %20s | %20s |\n' "what" "seconds" "peak RSS, MiB"
printf '|%s|%s|%s|\n' "------------------------------------" "----------------------" "----------------------"
measure "actormesh trace summary" "$tool" trace summary "$dir/big.json"
measure "actormesh trace summary (.json.gz)" "$tool" trace summary "$dir/big.json.gz"
measure "python3 json.load (peer)" python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$dir/big.json"
