#!/usr/bin/env bash
# record_vs_perf_deep.sh - perfrec record vs perf record -z on a
# sample-heavy, deep-stack workload, both recording at the same time.
#
#   tests/bench/record_vs_perf_deep.sh [BUILD_DIR] [SECONDS] [EXTRA RECORD ARGS...]
#
# Workload: a parallel build (`make -j2`, gcc) of this source tree in a
# fresh build directory: many short-lived processes with deep compiler
# stacks. Both recorders sample cpu-clock at 4 kHz with callchains,
# system-wide, started together as `-a -- sleep N` while the build runs,
# so they see the same events over the same time. Printed side by side:
# samples and records, losses, file bytes, bytes per sample; for perfrec
# also its InternedData packets (perfrec-analyze info).
# record_vs_perf.sh is the switch-heavy mix (pingpong); this is the other.
# KEEP=DIR keeps both files there. Not a timed test: run it by hand (root).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
secs=${2:-25}
shift 2 2>/dev/null || shift $# 2>/dev/null || true
extra=("$@")
perfrec=$build/recorder/perfrec
ana=$build/analyzer/perfrec-analyze
tmp=$(mktemp -d /tmp/record_vs_perf_deep.XXXXXX)
wl=
cleanup() {
	[ -n "$wl" ] && kill -- -"$wl" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

for x in "$perfrec" "$ana"; do
	[ -x "$x" ] || { echo "missing $x: build first (tests/build.sh $build)" >&2; exit 2; }
done
command -v perf >/dev/null || { echo "perf not installed" >&2; exit 2; }

pages=${RING_PAGES:-$((4 * 1024 * 1024 / $(getconf PAGESIZE)))}
common=(-a -F 4000 -g -e cpu-clock -m "$pages")

# the workload: configure first (not recorded), then build in its own
# process group so it can be stopped whole
cmake -S "$src" -B "$tmp/wl" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	>"$tmp/cmake.out" 2>&1 || { echo "configure failed: $tmp/cmake.out" >&2; exit 1; }
set -m
make -C "$tmp/wl" -j2 >/dev/null 2>&1 &
wl=$!
set +m
sleep 2

/usr/bin/time -f "CPU %U %S" -o "$tmp/perf.time" \
	perf record -z "${common[@]}" -o "$tmp/perf.data" -- sleep "$secs" \
	>"$tmp/perf.out" 2>&1 &
perf_pid=$!
/usr/bin/time -f "CPU %U %S" -o "$tmp/prec.time" \
	"$perfrec" record "${common[@]}" "${extra[@]}" -o "$tmp/t.prec" -- sleep "$secs" \
	>"$tmp/prec.out" 2>&1 &
prec_pid=$!
wait "$perf_pid" || true
wait "$prec_pid" || true
kill -- -"$wl" 2>/dev/null || true
wait "$wl" 2>/dev/null || true
wl=

cpu_of() { awk '/^CPU / { printf "%.2f", $2 + $3 }' "$1"; }
perf report --stats -i "$tmp/perf.data" >"$tmp/perf.stats" 2>/dev/null || true
perf_samples=$(awk '/Aggregated stats/ { on = 1 } /stats:$/ && !/Aggregated/ { on = 0 }
	on && / SAMPLE events:/ { for (i = 1; i <= NF; i++) if ($i == "events:") s += $(i + 1) }
	END { print s + 0 }' "$tmp/perf.stats")
perf_records=$(awk '/Aggregated stats/ { on = 1 } /stats:$/ && !/Aggregated/ { on = 0 }
	on && / (SAMPLE|MMAP|MMAP2|COMM|FORK|EXIT|LOST|LOST_SAMPLES|THROTTLE|UNTHROTTLE|SWITCH|SWITCH_CPU_WIDE|READ) events:/ {
		for (i = 1; i <= NF; i++) if ($i == "events:") s += $(i + 1) }
	END { print s + 0 }' "$tmp/perf.stats")
perf_lost=$(awk '/stats:$/ && !/Aggregated/ { on = 1 }
	on && /LOST_SAMPLES events:/ { s += $3 } END { print s + 0 }' "$tmp/perf.stats")
perf_bytes=$(stat -c %s "$tmp/perf.data")

"$ana" info "$tmp/t.prec" >"$tmp/info" 2>/dev/null || true
prec_samples=$(awk '$1 == "samples" { print $2; exit }' "$tmp/info")
prec_interned=$(awk '$1 == "interned" { print $2; exit }' "$tmp/info")
prec_records=$(sed -n 's/^perfrec: \([0-9]*\) records in.*/\1/p' "$tmp/prec.out")
prec_lost=$(sed -n 's/.* \([0-9]*\) lost.*/\1/p' "$tmp/prec.out" | head -1)
prec_bytes=$(stat -c %s "$tmp/t.prec")

per() { awk -v b="$1" -v r="$2" 'BEGIN { if (r > 0) printf "%.2f", b / r; else print "-" }'; }
nsper() { awk -v c="$1" -v r="$2" 'BEGIN { if (r > 0) printf "%.0f", c * 1e9 / r; else print "-" }'; }

echo "workload: make -j2 of this tree (gcc) for ${secs}s; both at once: ${common[*]} -- sleep $secs"
printf "%-26s %16s %16s\n" "" "perf record -z" "perfrec record"
printf "%-26s %16s %16s\n" "recorder CPU s (usr+sys)" "$(cpu_of "$tmp/perf.time")" \
	"$(cpu_of "$tmp/prec.time")"
printf "%-26s %16s %16s\n" "CPU ns per record" "$(nsper "$(cpu_of "$tmp/perf.time")" "$perf_records")" \
	"$(nsper "$(cpu_of "$tmp/prec.time")" "${prec_records:-0}")"
printf "%-26s %16s %16s\n" "samples" "$perf_samples" "${prec_samples:--}"
printf "%-26s %16s %16s\n" "records captured" "$perf_records" "${prec_records:--}"
printf "%-26s %16s %16s\n" "records lost" "$perf_lost" "${prec_lost:--}"
printf "%-26s %16s %16s\n" "interned packets" "-" "${prec_interned:--}"
printf "%-26s %16s %16s\n" "file bytes" "$perf_bytes" "$prec_bytes"
printf "%-26s %16s %16s\n" "bytes per sample" "$(per "$perf_bytes" "$perf_samples")" \
	"$(per "$prec_bytes" "${prec_samples:-0}")"
printf "%-26s %16s %16s\n" "file bytes / perf's" "1.00" "$(per "$prec_bytes" "$perf_bytes")"
if [ -n "${KEEP:-}" ]; then
	mkdir -p "$KEEP"
	cp "$tmp/perf.data" "$tmp/t.prec" "$KEEP/"
	echo "kept $KEEP/perf.data $KEEP/t.prec"
fi
