#!/usr/bin/env bash
# analyze_vs_perf.sh - perfrec-analyze vs perf's own analysis tools.
#
#   tests/bench/analyze_vs_perf.sh [BUILD_DIR] [ROUNDS]
#
# One workload (tests/kernel/workloads/pingpong: two threads passing a
# byte over pipes ROUNDS times, i.e. millions of context switches, after a
# short CPU spin) is recorded system-wide three times:
#   perfrec record -a -F 10000 -g --switch-events
#   perf record    -a -F 10000 -g --switch-events   (same events)
#   perf sched record                                (for perf sched latency)
# then each analysis is timed once (wall clock, page cache warm):
#   perfrec-analyze report   vs  perf report --stdio
#   perfrec-analyze dump     vs  perf script
#   perfrec-analyze sched    vs  perf sched latency
# Throughput is records per second of the tool's own input (records in
# the file: samples, switch records and side-band); the ratio is
# perfrec-analyze throughput / perf throughput (target >= 5).
# Needs root and perf. Not a ctest test: run it by hand.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
rounds=${2:-400000}
perfrec=$build/recorder/perfrec
ana=$build/analyzer/perfrec-analyze
pingpong=$build/tests/pingpong
tmp=$(mktemp -d /tmp/analyze_vs_perf.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for x in "$perfrec" "$ana" "$pingpong"; do
  [ -x "$x" ] || { echo "missing $x: build first (tests/build.sh $build)" >&2; exit 2; }
done
command -v perf >/dev/null || { echo "perf not installed" >&2; exit 2; }

now() { date +%s.%N; }
# time_cmd NAME CMD...: runs CMD (stdout discarded), prints seconds
time_cmd() {
  local t0 t1
  shift
  t0=$(now)
  "$@" >/dev/null 2>"$tmp/last.err" || { echo "command failed: $* ($(tail -2 "$tmp/last.err"))" >&2; exit 1; }
  t1=$(now)
  echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }'
}

echo "recording pingpong $rounds rounds with perfrec, perf, perf sched ..."
"$perfrec" record -q -a -F 10000 -g --switch-events -o "$tmp/t.prec" -- \
  "$pingpong" "$rounds" 200 >/dev/null
perf record -q -a -F 10000 -g --switch-events -o "$tmp/perf.data" -- \
  "$pingpong" "$rounds" 200 >/dev/null 2>&1
perf sched record -q -o "$tmp/sched.data" -- "$pingpong" "$rounds" 200 >/dev/null 2>&1

# records in each file
pr_records=$("$ana" info "$tmp/t.prec" --csv | awk -F, '
  /^# packets/ { on = 1; next } /^#/ { on = 0 }
  on && $1 ~ /^(sample|context_switch|task|mmap|loss|throttle|raw|group)$/ { s += $2 }
  END { print s + 0 }')
perf_stat_records() {
  perf report --stats -i "$1" 2>/dev/null | awk '/Aggregated stats/ { on = 1 }
    /stats:$/ && !/Aggregated/ { on = 0 }
    on && / (SAMPLE|MMAP|MMAP2|COMM|FORK|EXIT|LOST|LOST_SAMPLES|THROTTLE|UNTHROTTLE|SWITCH|SWITCH_CPU_WIDE|READ) events:/ {
      for (i = 1; i <= NF; i++) if ($i == "events:") s += $(i + 1) }
    END { print s + 0 }'
}
perf_records=$(perf_stat_records "$tmp/perf.data")
sched_records=$(perf_stat_records "$tmp/sched.data")
echo "files: perfrec $(stat -c %s "$tmp/t.prec") bytes, $pr_records records;" \
     "perf $(stat -c %s "$tmp/perf.data") bytes, $perf_records records;" \
     "perf sched $(stat -c %s "$tmp/sched.data") bytes, $sched_records records"

a_report=$(time_cmd report "$ana" report "$tmp/t.prec")
p_report=$(time_cmd report perf report --stdio -i "$tmp/perf.data")
a_dump=$(time_cmd dump "$ana" dump "$tmp/t.prec")
p_dump=$(time_cmd dump perf script -i "$tmp/perf.data")
a_sched=$(time_cmd sched "$ana" sched "$tmp/t.prec")
p_sched=$(time_cmd sched perf sched latency -i "$tmp/sched.data")

printf '\n%-34s %12s %9s %14s %8s\n' "analysis" "records" "seconds" "records/s" "ratio"
row() {  # name records secs [perf_rate]
  awk -v n="$1" -v r="$2" -v s="$3" -v pr="${4:-}" 'BEGIN {
    rate = s > 0 ? r / s : 0
    ratio = (pr != "" && pr > 0) ? sprintf("%.1fx", rate / pr) : ""
    printf "%-34s %12d %9.3f %14.0f %8s\n", n, r, s, rate, ratio }'
}
rate() { awk -v r="$1" -v s="$2" 'BEGIN { print (s > 0 ? r / s : 0) }'; }
row "perf report --stdio" "$perf_records" "$p_report"
row "perfrec-analyze report" "$pr_records" "$a_report" "$(rate "$perf_records" "$p_report")"
row "perf script" "$perf_records" "$p_dump"
row "perfrec-analyze dump" "$pr_records" "$a_dump" "$(rate "$perf_records" "$p_dump")"
row "perf sched latency" "$sched_records" "$p_sched"
row "perfrec-analyze sched" "$pr_records" "$a_sched" "$(rate "$sched_records" "$p_sched")"
