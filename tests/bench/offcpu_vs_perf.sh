#!/usr/bin/env bash
# offcpu_vs_perf.sh - perfrec record --off-cpu vs perf's off-CPU recipe.
#
#   tests/bench/offcpu_vs_perf.sh [BUILD_DIR] [ROUNDS]
#
# Workload: pingpong (tests/kernel/workloads/pingpong.c): two threads pass
# a byte over two pipes ROUNDS times (default 100000), so each thread
# blocks ROUNDS times. The classic way to get off-CPU time with stacks from
# Debian's perf (built without its BPF --off-cpu) is to record every
# sched_switch tracepoint with callchains and compute the gaps offline:
#   perf record -a -e sched:sched_switch -g
# against
#   perfrec record -a -e dummy --off-cpu
# (system-wide both, no sampling event: only off-CPU data). For each: the
# recorder's CPU seconds (user+sys, /usr/bin/time), its file's bytes, the
# workload's wall time against a run without a recorder (slowdown), and
# the answer: each pingpong thread's blocked time, from perf script's
# switch records and from perfrec-analyze sched's off-CPU states. One run
# per invocation; root; not a test. What it shows: perfrec should need at
# most a quarter of perf's bytes and CPU for the same blocked-time answer.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
rounds=${2:-100000}
perfrec=$build/recorder/perfrec
ana=$build/analyzer/perfrec-analyze
pingpong=$build/tests/pingpong
tmp=$(mktemp -d /tmp/offcpu_vs_perf.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for x in "$perfrec" "$ana" "$pingpong"; do
	[ -x "$x" ] || { echo "missing $x: build first (tests/build.sh $build)" >&2; exit 2; }
done
command -v perf >/dev/null || { echo "perf not installed (linux-perf)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 2; }

now() { date +%s.%N; }
# pingpong ROUNDS, its wall seconds into $1, its output into $2
workload() {
	local t0 t1
	t0=$(now)
	"$pingpong" "$rounds" 0 0 >"$2"
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }' >"$1"
}
cpu_of() { awk '/^CPU / { printf "%.2f", $2 + $3 }' "$1"; }

# A recorder runs system-wide for long enough; the workload starts once it
# is up and ends well before it stops.
secs=$(( rounds / 20000 + 4 ))
run() {   # run NAME COMMAND...
	local name=$1; shift
	/usr/bin/time -f "CPU %U %S" -o "$tmp/$name.time" "$@" -- sleep "$secs" \
		>"$tmp/$name.rec.out" 2>&1 &
	local rec=$!
	sleep 1
	workload "$tmp/$name.wall" "$tmp/$name.out"
	wait "$rec" || true
}

workload "$tmp/base.wall" "$tmp/base.out"
run perf perf record -q -a -e sched:sched_switch -g -o "$tmp/perf.data"
run prec "$perfrec" record -q -a -e dummy --off-cpu -o "$tmp/t.prec"

# ---- the answers: blocked ms per pingpong thread
tids() { sed -n 's/.*ping tid \([0-9]*\), pong tid \([0-9]*\).*/\1 \2/p' "$1"; }
read -r perf_ping perf_pong < <(tids "$tmp/perf.out")
perf script -G -F time,trace -i "$tmp/perf.data" 2>/dev/null |
	awk -v a="$perf_ping" -v b="$perf_pong" '
	{ t = $1; sub(":", "", t); pp = ""; np = ""
	  for (i = 2; i <= NF; i++) {
		if ($i ~ /^prev_pid=/) { pp = substr($i, 10) }
		if ($i ~ /^next_pid=/) { np = substr($i, 10) } }
	  if (pp == a || pp == b) out[pp] = t
	  if ((np == a || np == b) && (np in out)) { off[np] += t - out[np]; delete out[np] } }
	END { printf "%.1f %.1f\n", off[a] * 1000, off[b] * 1000 }' >"$tmp/perf.answer"
read -r prec_ping prec_pong < <(tids "$tmp/prec.out")
"$ana" sched --csv "$tmp/t.prec" | awk -F, -v a="$prec_ping" -v b="$prec_pong" '
	$0 == "# states" { f = 1; h = 0; next } /^# / { f = 0 }
	f && !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
	f && NF { s[$c["tid"]] += $c["blocked_ms"] }
	END { printf "%.1f %.1f\n", s[a], s[b] }' >"$tmp/prec.answer"

perf_bytes=$(stat -c %s "$tmp/perf.data")
prec_bytes=$(stat -c %s "$tmp/t.prec")
perf_cpu=$(cpu_of "$tmp/perf.time")
prec_cpu=$(cpu_of "$tmp/prec.time")
base=$(cat "$tmp/base.wall")
lost=$(grep -o 'lost [0-9]* chunks\|[0-9]* lost samples' "$tmp/perf.rec.out" | head -1 || true)

printf "pingpong %d rounds; alone %.3f s\n\n" "$rounds" "$base"
printf "%-34s %14s %14s\n" "" "perf sched_switch -g" "perfrec --off-cpu"
printf "%-34s %14s %14s\n" "recorder CPU s (user+sys)" "$perf_cpu" "$prec_cpu"
printf "%-34s %14s %14s\n" "file bytes" "$perf_bytes" "$prec_bytes"
printf "%-34s %14s %14s\n" "workload wall s" "$(cat "$tmp/perf.wall")" "$(cat "$tmp/prec.wall")"
printf "%-34s %13.1f%% %13.1f%%\n" "workload slowdown" \
	"$(awk -v a="$(cat "$tmp/perf.wall")" -v b="$base" 'BEGIN { print (a / b - 1) * 100 }')" \
	"$(awk -v a="$(cat "$tmp/prec.wall")" -v b="$base" 'BEGIN { print (a / b - 1) * 100 }')"
printf "%-34s %14s %14s\n" "pp-ping blocked ms" "$(cut -d' ' -f1 "$tmp/perf.answer")" \
	"$(cut -d' ' -f1 "$tmp/prec.answer")"
printf "%-34s %14s %14s\n" "pp-pong blocked ms" "$(cut -d' ' -f2 "$tmp/perf.answer")" \
	"$(cut -d' ' -f2 "$tmp/prec.answer")"
[ -n "$lost" ] && echo "perf: $lost"
printf "\nperfrec / perf: bytes %.3f, CPU %.3f (target: <= 0.25 each)\n" \
	"$(awk -v a="$prec_bytes" -v b="$perf_bytes" 'BEGIN { print a / b }')" \
	"$(awk -v a="$prec_cpu" -v b="$perf_cpu" 'BEGIN { print (b > 0 ? a / b : 0) }')"
