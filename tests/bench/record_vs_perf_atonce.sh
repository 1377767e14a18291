#!/usr/bin/env bash
# record_vs_perf_atonce.sh - perfrec record vs perf record -z, both
# recording the same workload at the same time.
#
#   tests/bench/record_vs_perf_atonce.sh [BUILD_DIR] [SECONDS] [EXTRA RECORD ARGS...]
#
# MIX=deep (default): sample-heavy, deep stacks. A parallel build (`make
# -j2`, gcc) of this source tree in a fresh build directory: many
# short-lived processes with deep compiler stacks; -a -g -F 4000.
# MIX=switch: switch-heavy. tests/kernel/workloads/pingpong (two threads
# passing a byte over pipes); -a -g -F 10000 --switch-events.
# MIX=redis: a real server. redis-server on a free loopback port driven
# by redis-benchmark (GET/SET, 50 clients); -a -g -F 4000. Its
# requests/s with and without recorders: host_impact.sh. (mix_lib.sh
# sets the mixes up.)
# Both recorders sample cpu-clock with callchains, system-wide, started
# together as `-a -- sleep N` while the workload runs, so they see the
# same events over the same time (record_vs_perf.sh runs them one after
# the other instead: cleaner CPU figures, but each sees a different
# amount of work on a busy machine). Printed side by side: samples and
# records, losses, file bytes, bytes per sample and per record; for
# perfrec also its InternedData packets (perfrec-analyze info).
# PERFREC2=BINARY records with a second perfrec at the same time (e.g. the
# build before a format change), printed in a third column: an A/B of two
# recorders on the very same events. KEEP=DIR keeps the files there.
# Not a timed test: run it by hand (root).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
secs=${2:-25}
shift 2 2>/dev/null || shift $# 2>/dev/null || true
extra=("$@")
perfrec=$build/recorder/perfrec
ana=$build/analyzer/perfrec-analyze
tmp=$(mktemp -d /tmp/record_vs_perf_atonce.XXXXXX)
# shellcheck source=mix_lib.sh
. "$(dirname "$0")/mix_lib.sh"
cleanup() {
	mix_stop
	rm -rf "$tmp"
}
trap cleanup EXIT

for x in "$perfrec" "$ana"; do
	[ -x "$x" ] || { echo "missing $x: build first (tests/build.sh $build)" >&2; exit 2; }
done
command -v perf >/dev/null || { echo "perf not installed" >&2; exit 2; }

pages=${RING_PAGES:-$((4 * 1024 * 1024 / $(getconf PAGESIZE)))}
mix_start "${MIX:-deep}" "$src" "$build" "$tmp" || exit $?
common=("${mix_opts[@]}" -m "$pages")
what=$mix_what
sleep 2

/usr/bin/time -f "CPU %U %S" -o "$tmp/perf.time" \
	perf record -z "${common[@]}" -o "$tmp/perf.data" -- sleep "$secs" \
	>"$tmp/perf.out" 2>&1 &
pids=($!)
recs=(prec)
bins=("$perfrec")
if [ -n "${PERFREC2:-}" ]; then
	recs+=(prec2)
	bins+=("$PERFREC2")
fi
for i in "${!recs[@]}"; do
	/usr/bin/time -f "CPU %U %S" -o "$tmp/${recs[$i]}.time" \
		"${bins[$i]}" record "${common[@]}" "${extra[@]}" -o "$tmp/${recs[$i]}.prec" \
		-- sleep "$secs" >"$tmp/${recs[$i]}.out" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || true
done
mix_stop

cpu_of() { awk '/^CPU / { printf "%.2f", $2 + $3 }' "$1"; }
per() { awk -v b="$1" -v r="$2" 'BEGIN { if (r > 0) printf "%.2f", b / r; else print "-" }'; }
nsper() { awk -v c="$1" -v r="$2" 'BEGIN { if (r > 0) printf "%.0f", c * 1e9 / r; else print "-" }'; }

perf report --stats -i "$tmp/perf.data" >"$tmp/perf.stats" 2>/dev/null || true
stat_sum() {   # perf's aggregated counts of the record types named by $1
	awk -v re=" ($1) events:" '/Aggregated stats/ { on = 1 } /stats:$/ && !/Aggregated/ { on = 0 }
		on && $0 ~ re { for (i = 1; i <= NF; i++) if ($i == "events:") s += $(i + 1) }
		END { print s + 0 }' "$tmp/perf.stats"
}
col_cpu=("$(cpu_of "$tmp/perf.time")")
col_samples=("$(stat_sum SAMPLE)")
col_records=("$(stat_sum 'SAMPLE|MMAP|MMAP2|COMM|FORK|EXIT|LOST|LOST_SAMPLES|THROTTLE|UNTHROTTLE|SWITCH|SWITCH_CPU_WIDE|READ')")
col_lost=("$(awk '/stats:$/ && !/Aggregated/ { on = 1 }
	on && /LOST_SAMPLES events:/ { s += $3 } END { print s + 0 }' "$tmp/perf.stats")")
col_interned=(-)
col_bytes=("$(stat -c %s "$tmp/perf.data")")
for r in "${recs[@]}"; do
	"$ana" info "$tmp/$r.prec" >"$tmp/$r.info" 2>/dev/null || true
	col_cpu+=("$(cpu_of "$tmp/$r.time")")
	col_samples+=("$(awk '$1 == "samples" { print $2; exit }' "$tmp/$r.info")")
	col_interned+=("$(awk '$1 == "interned" { print $2; exit }' "$tmp/$r.info")")
	col_records+=("$(sed -n 's/^perfrec: \([0-9]*\) records in.*/\1/p' "$tmp/$r.out")")
	col_lost+=("$(sed -n 's/.* \([0-9]*\) lost.*/\1/p' "$tmp/$r.out" | head -1)")
	col_bytes+=("$(stat -c %s "$tmp/$r.prec")")
done

row() {   # label, then one value per column
	local label=$1
	shift
	printf "%-26s" "$label"
	printf " %16s" "$@"
	printf "\n"
}
echo "workload: $what for ${secs}s; all at once: ${common[*]} -- sleep $secs"
heads=("perf record -z" "perfrec record")
[ -n "${PERFREC2:-}" ] && heads+=("$(basename "$(dirname "$PERFREC2")")/perfrec")
row "" "${heads[@]}"
n=${#col_bytes[@]}
vals=(); for ((i = 0; i < n; i++)); do vals+=("${col_cpu[$i]}"); done
row "recorder CPU s (usr+sys)" "${vals[@]}"
vals=(); for ((i = 0; i < n; i++)); do vals+=("$(nsper "${col_cpu[$i]}" "${col_records[$i]:-0}")"); done
row "CPU ns per record" "${vals[@]}"
row "samples" "${col_samples[@]}"
row "records captured" "${col_records[@]}"
row "records lost" "${col_lost[@]}"
row "interned packets" "${col_interned[@]}"
row "file bytes" "${col_bytes[@]}"
vals=(); for ((i = 0; i < n; i++)); do vals+=("$(per "${col_bytes[$i]}" "${col_samples[$i]:-0}")"); done
row "bytes per sample" "${vals[@]}"
vals=(); for ((i = 0; i < n; i++)); do vals+=("$(per "${col_bytes[$i]}" "${col_records[$i]:-0}")"); done
row "bytes per record" "${vals[@]}"
vals=(); for ((i = 0; i < n; i++)); do vals+=("$(per "${col_bytes[$i]}" "${col_bytes[0]}")"); done
row "file bytes / perf's" "${vals[@]}"
if [ -n "${KEEP:-}" ]; then
	mkdir -p "$KEEP"
	cp "$tmp/perf.data" "$KEEP/"
	for r in "${recs[@]}"; do
		cp "$tmp/$r.prec" "$KEEP/$r.prec"
	done
	echo "kept in $KEEP: perf.data ${recs[*]/%/.prec}"
fi
