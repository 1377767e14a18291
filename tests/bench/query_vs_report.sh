#!/usr/bin/env bash
# query_vs_report.sh - what SQL over a trace costs, against report, in one
# run:
#
#   tests/bench/query_vs_report.sh [BUILD_DIR] [RUNS] [REPEAT | FILE.prec]
#
# One file: FILE.prec (a real recording: `perfrec record -a -g -F 4000 -d
# 20` beside a busy workload gives 1-second frames, as perfrec writes
# them), or one written by tracegen: REPEAT copies (default 3000: 5
# minutes, 240,000 samples) of the golden 70 ms timeline, cut into a frame
# per stream every 10 ms of it (a hundred times perfrec's default), so a
# window's fixed cost (the index, pass 1) weighs more there.
# 1. `query 'SELECT sym, sum(period) FROM samples GROUP BY sym'` vs
#    `report -s sym` over the same file: samples per CPU second (rows/s
#    for query, records/s for report), and the same for a scan that names
#    no frame (`SELECT count(*), sum(period) FROM samples` vs `report -s
#    pid`).
# 2. A window of a tenth of the trace (`WHERE time_ns BETWEEN ...`) vs the
#    whole: its cost as a multiple of its share of the full scan's (target
#    at most ~1.5x), and the frames each decodes (--stats).
# CPU seconds (user + sys; the machine may be shared), medians of RUNS runs
# (default 3), -j1. Figures, never pass/fail.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
runs=${2:-3}
repeat=${3:-3000}
analyze=$build/analyzer/perfrec-analyze
gen=$build/tests/tracegen_cli
tmp=$(mktemp -d /tmp/query_vs_report.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if [ -f "$repeat" ]; then
	f=$repeat
	repeat=$(basename "$f")
else
	f=$tmp/t.prec
	"$gen" --by-kind "$f" "$repeat" 65536
	repeat="$repeat timelines"
fi
samples=$("$analyze" query 'SELECT count(*) FROM samples' "$f" --csv | tail -1)
echo "trace: $repeat, $samples samples, $(du -h "$f" | cut -f1)"

# median CPU seconds of a command over $runs runs
cpu() {
	local v=()
	for _ in $(seq "$runs"); do
		/usr/bin/time -f "%U %S" -o "$tmp/t" "$@" > /dev/null 2> "$tmp/err" || {
			cat "$tmp/err" >&2; return 1; }
		read -r u s < "$tmp/t"
		v+=("$(awk "BEGIN { print $u + $s }")")
	done
	printf '%s\n' "${v[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}
rate() { awk "BEGIN { printf \"%.0f\", $samples / ($1 > 0 ? $1 : 0.001) }"; }
Q=("$analyze" query -j1 --no-progress)
q() { "${Q[@]}" "$@" "$f"; }

rep_sym=$(cpu "$analyze" report "$f" -s sym -j1 --no-progress)
q_sym=$(cpu "${Q[@]}" 'SELECT sym, sum(period) FROM samples GROUP BY sym' "$f")
rep_pid=$(cpu "$analyze" report "$f" -s pid -j1 --no-progress)
q_cnt=$(cpu "${Q[@]}" 'SELECT count(*), sum(period) FROM samples' "$f")
printf '\n%-44s %10s %14s\n' "scan of every sample" "CPU s" "samples/s"
printf '%-44s %10s %14s\n' "report -s sym" "$rep_sym" "$(rate "$rep_sym")"
printf '%-44s %10s %14s\n' "query: sym, sum(period) GROUP BY sym" "$q_sym" "$(rate "$q_sym")"
printf '%-44s %10s %14s\n' "report -s pid" "$rep_pid" "$(rate "$rep_pid")"
printf '%-44s %10s %14s\n' "query: count(*), sum(period)" "$q_cnt" "$(rate "$q_cnt")"
awk "BEGIN { printf \"query/report: %.2fx the CPU naming frames, %.2fx without\n\",
	$q_sym / ($rep_sym > 0 ? $rep_sym : 0.001), $q_cnt / ($rep_pid > 0 ? $rep_pid : 0.001) }"

read -r lo hi <<<"$(q 'SELECT min(time_ns), max(time_ns) FROM samples' --csv | tail -1 | tr , ' ')"
wlo=$((lo + (hi - lo) * 45 / 100)); whi=$((lo + (hi - lo) * 55 / 100))
full=$(cpu "${Q[@]}" 'SELECT sym, sum(period) FROM samples GROUP BY sym' "$f")
win=$(cpu "${Q[@]}" "SELECT sym, sum(period) FROM samples WHERE time_ns BETWEEN $wlo AND $whi GROUP BY sym" "$f")
ff=$(q 'SELECT count(*) FROM samples' --stats 2>&1 >/dev/null | sed -n 's/.*frames_read=\([0-9]*\).*/\1/p')
fw=$(q "SELECT count(*) FROM samples WHERE time_ns BETWEEN $wlo AND $whi" --stats 2>&1 >/dev/null |
	sed -n 's/.*frames_read=\([0-9]*\).*/\1/p')
printf '\n%-44s %10s %14s\n' "a tenth of the time vs all of it" "CPU s" "frames read"
printf '%-44s %10s %14s\n' "query GROUP BY sym, whole trace" "$full" "$ff"
printf '%-44s %10s %14s\n' "the same WHERE time_ns BETWEEN (a tenth)" "$win" "$fw"
awk "BEGIN { printf \"window: %.2fx its tenth's share of the full scan's CPU (target <= ~1.5x)\n\",
	$win / (($full > 0 ? $full : 0.001) / 10) }"
