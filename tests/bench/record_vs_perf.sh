#!/usr/bin/env bash
# record_vs_perf.sh - perfrec record vs perf record -z on the same workload.
#
#   tests/bench/record_vs_perf.sh [BUILD_DIR] [SECONDS] [EXTRA RECORD ARGS...]
#
# Workload: the pingpong program (two threads passing a byte over pipes as
# fast as they can: heavy context switching) running beside the recorder.
# Both recorders sample cpu-clock at 10 kHz with callchains and context
# switch records, system-wide, started as `-a -- sleep N`, so the numbers
# are the recorder's own cost. Printed side by side: recorder CPU seconds
# (user+sys), records captured, records lost, file bytes, bytes per record.
# Not a timed test: run it by hand (root), one run per invocation.
# KEEP=DIR keeps both files there.
#
# Then the sample-heavy mix: record_vs_perf_atonce.sh (a parallel build,
# deep stacks, -a -g -F 4000, both recorders at once) for DEEP_SECS
# seconds (default 25; 0 skips it), printed the same way; then the
# real-server mix (MIX=redis of the same script: redis-server under
# redis-benchmark, -a -g -F 4000) for REDIS_SECS seconds (default 25; 0
# skips it). So this one command prints all three mixes.
#
# Fairness: same events, same target, same ring size (-m PAGES for both,
# default perfrec's own default as root: 4 MiB per CPU; RING_PAGES=128
# gives perf's default 512 KiB to both). What differs: perf -z compresses
# at zstd level 1, perfrec at 2 (its default); perf keeps the raw kernel
# records, perfrec re-encodes them and embeds the symbols that samples hit
# (kallsyms, ELF symbols); perf does its build-id pass after recording.
# The workload runs as fast as the CPUs left to it allow, so the record
# count differs between the runs: compare CPU ns per record too.
# perfrec's symbol cache (README, "Symbol cache") is warm from the second
# run on: PERFREC_SYMBOL_CACHE= measures without it, an empty directory
# a cold one.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
secs=${2:-5}
shift 2 2>/dev/null || shift $# 2>/dev/null || true
extra=("$@")
perfrec=$build/recorder/perfrec
pingpong=$build/tests/pingpong
tmp=$(mktemp -d /tmp/record_vs_perf.XXXXXX)
trap 'rm -rf "$tmp"; [ -n "${wl:-}" ] && kill "$wl" 2>/dev/null || true' EXIT

for x in "$perfrec" "$pingpong"; do
	[ -x "$x" ] || { echo "missing $x: build first (tests/build.sh $build)" >&2; exit 2; }
done
command -v perf >/dev/null || { echo "perf not installed" >&2; exit 2; }

pages=${RING_PAGES:-$((4 * 1024 * 1024 / $(getconf PAGESIZE)))}
common=(-a -F 10000 -g --switch-events -e cpu-clock -m "$pages")

start_workload() {
	"$pingpong" 1000000000 0 0 >/dev/null &
	wl=$!
	sleep 0.5
}
stop_workload() {
	kill "$wl" 2>/dev/null || true
	wait "$wl" 2>/dev/null || true
	wl=
}
# cpu seconds (user+sys) of a command, from /usr/bin/time or bash's times
cpu_of() {
	awk '/^CPU / { printf "%.2f", $2 + $3 }' "$1"
}

# ---- perf record -z
start_workload
/usr/bin/time -f "CPU %U %S" -o "$tmp/perf.time" \
	perf record -z "${common[@]}" -o "$tmp/perf.data" -- sleep "$secs" \
	>"$tmp/perf.out" 2>&1 || true
stop_workload
perf report --stats -i "$tmp/perf.data" >"$tmp/perf.stats" 2>/dev/null || true
perf_cpu=$(cpu_of "$tmp/perf.time")
# kernel records: every ring record type, not perf's own bookkeeping
perf_records=$(awk '/Aggregated stats/ { on = 1 } /stats:$/ && !/Aggregated/ { on = 0 }
	on && / (SAMPLE|MMAP|MMAP2|COMM|FORK|EXIT|LOST|LOST_SAMPLES|THROTTLE|UNTHROTTLE|SWITCH|SWITCH_CPU_WIDE|READ) events:/ {
		for (i = 1; i <= NF; i++) if ($i == "events:") s += $(i + 1) }
	END { print s + 0 }' "$tmp/perf.stats")
# lost: the LOST_SAMPLES counts perf attributes to each event
perf_lost=$(awk '/stats:$/ && !/Aggregated/ { on = 1 }
	on && /LOST_SAMPLES events:/ { s += $3 } END { print s + 0 }' "$tmp/perf.stats")
perf_bytes=$(stat -c %s "$tmp/perf.data")

# ---- perfrec record
start_workload
/usr/bin/time -f "CPU %U %S" -o "$tmp/prec.time" \
	"$perfrec" record "${common[@]}" "${extra[@]}" -o "$tmp/t.prec" -- sleep "$secs" \
	>"$tmp/prec.out" 2>&1 || true
stop_workload
prec_cpu=$(cpu_of "$tmp/prec.time")
prec_records=$(sed -n 's/^perfrec: \([0-9]*\) records in.*/\1/p' "$tmp/prec.out")
prec_lost=$(sed -n 's/.* samples.*, \([0-9]*\) lost (.*/\1/p' "$tmp/prec.out")
prec_bytes=$(stat -c %s "$tmp/t.prec")

nsper() { awk -v c="$1" -v r="$2" 'BEGIN { if (r > 0) printf "%.0f", c * 1e9 / r; else print "-" }'; }
per() { awk -v b="$1" -v r="$2" 'BEGIN { if (r > 0) printf "%.2f", b / r; else print "-" }'; }
lostpct() { awk -v l="$1" -v r="$2" 'BEGIN { if (l + r > 0) printf "%.1f%%", 100 * l / (l + r); else print "0.0%" }'; }

echo "workload: pingpong (pipe ping-pong, 2 threads) for ${secs}s; recorders: ${common[*]} -- sleep $secs"
printf "%-26s %16s %16s\n" "" "perf record -z" "perfrec record"
printf "%-26s %16s %16s\n" "ring per CPU" "$((pages * $(getconf PAGESIZE) / 1024)) KiB" \
	"$((pages * $(getconf PAGESIZE) / 1024)) KiB"
printf "%-26s %16s %16s\n" "recorder CPU s (usr+sys)" "$perf_cpu" "$prec_cpu"
printf "%-26s %16s %16s\n" "CPU ns per record" "$(nsper "$perf_cpu" "$perf_records")" \
	"$(nsper "$prec_cpu" "$prec_records")"
printf "%-26s %16s %16s\n" "records captured" "$perf_records" "$prec_records"
printf "%-26s %16s %16s\n" "records lost" "$perf_lost ($(lostpct "$perf_lost" "$perf_records"))" \
	"$prec_lost ($(lostpct "$prec_lost" "$prec_records"))"
printf "%-26s %16s %16s\n" "file bytes" "$perf_bytes" "$prec_bytes"
printf "%-26s %16s %16s\n" "bytes per record" "$(per "$perf_bytes" "$perf_records")" \
	"$(per "$prec_bytes" "$prec_records")"
echo
echo "perf:    $(grep -h 'Captured' "$tmp/perf.out" || true)"
echo "perfrec: $(grep -h 'records in' "$tmp/prec.out" || true)"
if [ -n "${KEEP:-}" ]; then
	mkdir -p "$KEEP"
	cp "$tmp/perf.data" "$tmp/t.prec" "$KEEP/"
	echo "kept $KEEP/perf.data $KEEP/t.prec"
fi

if [ "${DEEP_SECS:-25}" != 0 ]; then
	echo
	MIX=deep KEEP=${KEEP:+$KEEP/deep} "$src/tests/bench/record_vs_perf_atonce.sh" "$build" \
		"${DEEP_SECS:-25}" "${extra[@]}"
fi
if [ "${REDIS_SECS:-25}" != 0 ]; then
	echo
	MIX=redis KEEP=${KEEP:+$KEEP/redis} "$src/tests/bench/record_vs_perf_atonce.sh" "$build" \
		"${REDIS_SECS:-25}" "${extra[@]}"
fi
