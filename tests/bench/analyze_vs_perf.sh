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
# then each analysis is timed (best wall clock of 3 runs, page cache warm):
#   perfrec-analyze report   vs  perf report --stdio
#   perfrec-analyze dump     vs  perf script (with task/mmap/switch/lost
#                                 events, so both print every record)
#   perfrec-analyze sched    vs  perf sched latency
# Throughput is records per second of the tool's own input (records in
# the file: samples, switch records and side-band), by wall-clock and by
# CPU time; the ratios are perfrec-analyze throughput / perf throughput
# (target >= 5).
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
# time_cmd CMD...: runs CMD three times (stdout discarded) and prints
# "WALL CPU": the best wall-clock seconds and the best CPU seconds
# (user+sys, all threads) - the host may be busy with other work, and CPU
# time is the steadier figure then.
time_cmd() {
  local t0 t1 best= bestcpu= cpu
  for _ in 1 2 3; do
    t0=$(now)
    /usr/bin/time -f "%U %S" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/last.err" ||
      { echo "command failed: $* ($(tail -2 "$tmp/last.err"))" >&2; exit 1; }
    t1=$(now)
    cpu=$(awk '{ printf "%.3f", $1 + $2 }' "$tmp/time")
    best=$(echo "$t0 $t1 ${best:-1e9}" | awk '{ d = $2 - $1; printf "%.3f", d < $3 ? d : $3 }')
    bestcpu=$(echo "$cpu ${bestcpu:-1e9}" | awk '{ printf "%.3f", $1 < $2 ? $1 : $2 }')
  done
  echo "$best $bestcpu"
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

a_report=$(time_cmd "$ana" report "$tmp/t.prec")
p_report=$(time_cmd perf report --stdio -i "$tmp/perf.data")
a_dump=$(time_cmd "$ana" dump "$tmp/t.prec")
# every record, as perfrec-analyze dump prints them (not only samples)
p_dump=$(time_cmd perf script -i "$tmp/perf.data" --show-task-events \
         --show-mmap-events --show-switch-events --show-lost-events)
a_sched=$(time_cmd "$ana" sched "$tmp/t.prec")
p_sched=$(time_cmd perf sched latency -i "$tmp/sched.data")

printf '\n%-24s %9s %7s %7s %11s %11s %7s %7s\n' "analysis" "records" "wall s" "cpu s" \
  "rec/s wall" "rec/s cpu" "x wall" "x cpu"
# row NAME RECORDS "WALL CPU" [PERF_RECORDS "PERF_WALL PERF_CPU"]
row() {
  awk -v n="$1" -v r="$2" -v t="$3" -v pr="${4:-}" -v pt="${5:-}" 'BEGIN {
    split(t, a, " "); w = a[1]; c = a[2]
    rw = w > 0 ? r / w : 0; rc = c > 0 ? r / c : 0
    xw = ""; xc = ""
    if (pr != "") {
      split(pt, b, " ")
      if (b[1] > 0 && pr > 0) xw = sprintf("%.1f", rw / (pr / b[1]))
      if (b[2] > 0 && pr > 0) xc = sprintf("%.1f", rc / (pr / b[2]))
    }
    printf "%-24s %9d %7.3f %7.3f %11.0f %11.0f %7s %7s\n", n, r, w, c, rw, rc, xw, xc }'
}
row "perf report --stdio" "$perf_records" "$p_report"
row "perfrec-analyze report" "$pr_records" "$a_report" "$perf_records" "$p_report"
row "perf script" "$perf_records" "$p_dump"
row "perfrec-analyze dump" "$pr_records" "$a_dump" "$perf_records" "$p_dump"
row "perf sched latency" "$sched_records" "$p_sched"
row "perfrec-analyze sched" "$pr_records" "$a_sched" "$sched_records" "$p_sched"
