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
# then each analysis is timed (median wall clock and CPU time of RUNS runs,
# default 5, page cache warm; peak RSS the largest of them):
#   perfrec-analyze report   vs  perf report --stdio
#   perfrec-analyze export --format folded
#                            vs  perf report --stdio -g folded
#   perfrec-analyze dump     vs  perf script (with task/mmap/switch/lost
#                                 events, so both print every record)
#   dump --time (a tenth of the trace, in its middle)
#                            vs  perf script --time (the same window)
#   perfrec-analyze sched    vs  perf sched latency
# each perfrec-analyze run at -j1 and -j2 (the speedup is the -j1/-j2
# wall-clock ratio). Throughput is records per second of the tool's own
# input (records in the file: samples, switch records and side-band), by
# wall-clock and by CPU time; the ratios are perfrec-analyze throughput /
# perf throughput (target >= 10). The window rows also print the share of
# the full pass's time the window took (perfrec reads the metadata frames
# and the window's frames only).
# Memory in trace length: the same workload recorded per task (pingpong
# alone, so the rows and symbols do not grow with other processes coming
# and going, as they do system-wide) for ROUNDS and for LONG rounds
# (default 5 x ROUNDS), and the peak RSS of report, sched and dump at -j1
# on each, with the long/short ratio (flat = 1.0). Then system-wide
# (-a -g -F 4000), where processes do come and go: a loop of short
# pingpong runs (a new process each time) recorded by two perfrec
# processes started together, one for MEM_SHORT seconds (default 6) and
# one for 5 x as long, so the short trace is the long one's first part.
# The peak RSS of a run is the median of RUNS runs here (one run's peak
# moves with the allocator, not with the trace).
# Needs root and perf. Not a ctest test: run it by hand.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
rounds=${2:-400000}
runs=${RUNS:-5}
long_rounds=${LONG:-$((5 * rounds))}
mem_short=${MEM_SHORT:-6}
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
# time_cmd CMD...: runs CMD $runs times (stdout discarded) and prints
# "WALL CPU RSS": the median wall-clock seconds, the median CPU seconds
# (user+sys, all threads) and the largest peak RSS in KiB - the host is
# noisy: medians, not one run.
median() { sort -g | awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
time_cmd() {
  local t0 t1 walls= cpus= rss=0 r
  for _ in $(seq "$runs"); do
    t0=$(now)
    /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/last.err" ||
      { echo "command failed: $* ($(tail -2 "$tmp/last.err"))" >&2; exit 1; }
    t1=$(now)
    walls="$walls $(echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }')"
    cpus="$cpus $(awk '{ printf "%.3f", $1 + $2 }' "$tmp/time")"
    r=$(awk '{ print $3 }' "$tmp/time")
    [ "$r" -gt "$rss" ] && rss=$r
  done
  echo "$(echo $walls | tr ' ' '\n' | median) $(echo $cpus | tr ' ' '\n' | median) $rss"
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

# the window: a tenth of the trace in its middle, from perfrec's own
# view of the time range (seconds from the start, as --time takes them),
# and the same absolute range for perf script (seconds of its clock,
# CLOCK_MONOTONIC for both here)
read -r t_lo t_hi < <("$ana" info "$tmp/t.prec" --json | python3 -c '
import json, sys
i = json.load(sys.stdin)["info"]
d = float(i["duration_s"])
print("%.6f %.6f" % (0.45 * d, 0.55 * d))')
read -r p_lo p_hi < <(perf script -i "$tmp/perf.data" -F time 2>/dev/null | awk '
  { t = $1; sub(":", "", t); if (!n++) lo = t; hi = t }
  END { d = hi - lo; printf "%.6f %.6f\n", lo + 0.45 * d, lo + 0.55 * d }')

p_report=$(time_cmd perf report --stdio -i "$tmp/perf.data")
p_export=$(time_cmd perf report --stdio --no-children -g folded -i "$tmp/perf.data")
# every record, as perfrec-analyze dump prints them (not only samples)
p_dump=$(time_cmd perf script -i "$tmp/perf.data" --show-task-events \
         --show-mmap-events --show-switch-events --show-lost-events)
p_window=$(time_cmd perf script -i "$tmp/perf.data" --show-task-events \
         --show-mmap-events --show-switch-events --show-lost-events --time "$p_lo,$p_hi")
p_sched=$(time_cmd perf sched latency -i "$tmp/sched.data")
for j in 1 2; do
  eval "a_report_$j=\$(time_cmd \"\$ana\" report -j $j \"\$tmp/t.prec\")"
  eval "a_export_$j=\$(time_cmd \"\$ana\" export -j $j --format folded \"\$tmp/t.prec\")"
  eval "a_dump_$j=\$(time_cmd \"\$ana\" dump -j $j \"\$tmp/t.prec\")"
  eval "a_window_$j=\$(time_cmd \"\$ana\" dump -j $j --time \"\$t_lo,\$t_hi\" \"\$tmp/t.prec\")"
  eval "a_sched_$j=\$(time_cmd \"\$ana\" sched -j $j \"\$tmp/t.prec\")"
done

printf '\n%-30s %9s %7s %7s %11s %11s %7s %7s %8s\n' "analysis (median of $runs)" "records" \
  "wall s" "cpu s" "rec/s wall" "rec/s cpu" "x wall" "x cpu" "RSS MiB"
# row NAME RECORDS "WALL CPU RSS" [PERF_RECORDS "PERF_WALL PERF_CPU PERF_RSS"]
row() {
  awk -v n="$1" -v r="$2" -v t="$3" -v pr="${4:-}" -v pt="${5:-}" 'BEGIN {
    split(t, a, " "); w = a[1]; c = a[2]; m = a[3] / 1024
    rw = w > 0 ? r / w : 0; rc = c > 0 ? r / c : 0
    xw = ""; xc = ""
    if (pr != "") {
      split(pt, b, " ")
      if (b[1] > 0 && pr > 0) xw = sprintf("%.1f", rw / (pr / b[1]))
      if (b[2] > 0 && pr > 0) xc = sprintf("%.1f", rc / (pr / b[2]))
    }
    printf "%-30s %9d %7.3f %7.3f %11.0f %11.0f %7s %7s %8.1f\n", n, r, w, c, rw, rc, xw, xc, m }'
}
# records in a window: the same share of the file's records for both
# (a rate, so only the ratio to the full pass matters)
row "perf report --stdio" "$perf_records" "$p_report"
row "perfrec-analyze report -j1" "$pr_records" "$a_report_1" "$perf_records" "$p_report"
row "perfrec-analyze report -j2" "$pr_records" "$a_report_2" "$perf_records" "$p_report"
row "perf report -g folded" "$perf_records" "$p_export"
row "perfrec-analyze export -j1" "$pr_records" "$a_export_1" "$perf_records" "$p_export"
row "perfrec-analyze export -j2" "$pr_records" "$a_export_2" "$perf_records" "$p_export"
row "perf script" "$perf_records" "$p_dump"
row "perfrec-analyze dump -j1" "$pr_records" "$a_dump_1" "$perf_records" "$p_dump"
row "perfrec-analyze dump -j2" "$pr_records" "$a_dump_2" "$perf_records" "$p_dump"
row "perf sched latency" "$sched_records" "$p_sched"
row "perfrec-analyze sched -j1" "$pr_records" "$a_sched_1" "$sched_records" "$p_sched"
row "perfrec-analyze sched -j2" "$pr_records" "$a_sched_2" "$sched_records" "$p_sched"

echo
echo "-j2 speedup (wall -j1 / wall -j2):"
for a in report export dump sched; do
  v1=a_${a}_1 v2=a_${a}_2
  echo "$a ${!v1} ${!v2}" | awk '{ printf "  %-8s %.2fx\n", $1, ($5 > 0) ? $2 / $5 : 0 }'
done
echo
echo "a tenth of the trace (--time), wall time as a share of the full pass:"
echo "perf $p_window $p_dump" | awk '{ printf "  perf script --time           %.3f s  %5.1f%% of perf script\n", $2, 100 * $2 / $5 }'
echo "ana $a_window_1 $a_dump_1" | awk '{ printf "  perfrec-analyze dump --time  %.3f s  %5.1f%% of dump (-j1)\n", $2, 100 * $2 / $5 }'

echo
echo "memory in trace length (per-task pingpong, $rounds vs $long_rounds rounds; peak RSS of $runs runs at -j1):"
"$perfrec" record -q -F 10000 -g --switch-events -o "$tmp/short.prec" -- \
  "$pingpong" "$rounds" 200 >/dev/null
"$perfrec" record -q -F 10000 -g --switch-events -o "$tmp/long.prec" -- \
  "$pingpong" "$long_rounds" 200 >/dev/null
printf '  %-8s %12s %12s %7s\n' analysis "short MiB" "long MiB" "long/short"
for a in report sched dump; do
  s_t=$(time_cmd "$ana" "$a" -j 1 "$tmp/short.prec")
  l_t=$(time_cmd "$ana" "$a" -j 1 "$tmp/long.prec")
  echo "$a $s_t $l_t" | awk '{ printf "  %-8s %12.1f %12.1f %7.2fx\n", $1, $4 / 1024, $7 / 1024, ($4 > 0) ? $7 / $4 : 0 }'
done

# rss_median CMD...: the median peak RSS in KiB of $runs runs
rss_median() {
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%M" -o "$tmp/rss" "$@" >/dev/null 2>"$tmp/last.err" ||
      { echo "command failed: $* ($(tail -2 "$tmp/last.err"))" >&2; exit 1; }
    cat "$tmp/rss"
  done | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}
echo
echo "memory in trace length, system-wide (-a -g -F 4000; ${mem_short} s and $((5 * mem_short)) s recorded at once; median peak RSS of $runs runs at -j1):"
( while [ ! -e "$tmp/stop" ]; do "$pingpong" 20000 50 >/dev/null; done ) &
loop=$!
"$perfrec" record -q -a -g -F 4000 -o "$tmp/a_long.prec" -- sleep $((5 * mem_short)) &
along=$!
"$perfrec" record -q -a -g -F 4000 -o "$tmp/a_short.prec" -- sleep "$mem_short"
wait "$along"
touch "$tmp/stop"
wait "$loop"
printf '  %-8s %12s %12s %7s\n' analysis "short MiB" "long MiB" "long/short"
for a in report sched dump; do
  s_m=$(rss_median "$ana" "$a" -j 1 "$tmp/a_short.prec")
  l_m=$(rss_median "$ana" "$a" -j 1 "$tmp/a_long.prec")
  echo "$a $s_m $l_m" | awk '{ printf "  %-8s %12.1f %12.1f %7.2fx\n", $1, $2 / 1024, $3 / 1024, ($2 > 0) ? $3 / $2 : 0 }'
done
