#!/usr/bin/env bash
# dwarf_vs_perf.sh - `--call-graph dwarf`: perfrec against perf on code
# without frame pointers.
#
#   tests/bench/dwarf_vs_perf.sh [BUILD_DIR] [SECONDS] [FREQ]
#
# Workload: chain_nofp (tests/kernel/workloads, -O2 -fomit-frame-pointer:
# main -> chain_one -> chain_two -> chain_three -> qsort -> chain_compare,
# and chain_spin), run by each recorder as its command for SECONDS of CPU
# (default 5), sampled on cpu-clock at FREQ Hz (default 4000), 8 KiB user
# stacks. Printed side by side, never pass/fail:
#   - bytes per sample of the file;
#   - recorder CPU per sample: the recorder's user+sys time (/usr/bin/time
#     counts the recorder and its command) minus the command's own CPU,
#     which it prints; the kernel's stack copies at sample time are the
#     command's, the same for every recorder;
#   - the time of `report --children` on each file (perf report unwinds
#     the copied stacks with the binaries; perfrec-analyze reads callchains
#     unwound at record time, or unwinds raw stacks from the trace's unwind
#     tables).
# Columns: perf record (plain), perf record -z (zstd), perfrec record
# (unwound at record time, the default), perfrec record dwarf,raw (stacks
# kept for the analyzer). Run by hand (root), one run per invocation.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
secs=${2:-5}
freq=${3:-4000}
perfrec=$build/recorder/perfrec
ana=$build/analyzer/perfrec-analyze
prog=$build/tests/chain_nofp
tmp=$(mktemp -d /tmp/dwarf_vs_perf.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

for x in "$perfrec" "$ana" "$prog"; do
	[ -x "$x" ] || { echo "missing $x: build first (tests/build.sh $build)" >&2; exit 2; }
done
command -v perf >/dev/null || { echo "perf not installed" >&2; exit 2; }
cp "$prog" "$tmp/chain_nofp"

# run NAME CMD...: the recorder's CPU s (total - the command's own) -> NAME.cpu
run() {
	local name=$1
	shift
	/usr/bin/time -f "CPU %U %S" -o "$tmp/$name.time" "$@" >"$tmp/$name.out" 2>&1 || true
	awk '/^CPU / { t = $2 + $3 } /cpu_s/ { for (i = 1; i <= NF; i++) if ($i == "cpu_s") w = $(i + 1) }
	     END { printf "%.3f", t - w }' "$tmp/$name.time" "$tmp/$name.out" >"$tmp/$name.cpu"
}
# timed NAME CMD...: wall and CPU seconds of an analysis -> NAME.rt
timed() {
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S" -o "$tmp/$name.rt" "$@" >/dev/null 2>"$tmp/$name.rerr" || true
}

common=(-e cpu-clock -F "$freq")
run perf perf record "${common[@]}" --call-graph dwarf -o "$tmp/perf.data" -- "$tmp/chain_nofp" "$secs"
run perfz perf record -z "${common[@]}" --call-graph dwarf -o "$tmp/perfz.data" -- "$tmp/chain_nofp" "$secs"
run prec "$perfrec" record "${common[@]}" --call-graph dwarf -o "$tmp/t.prec" -- "$tmp/chain_nofp" "$secs"
run raw "$perfrec" record "${common[@]}" --call-graph dwarf,raw -o "$tmp/raw.prec" -- "$tmp/chain_nofp" "$secs"

samples_perf() {
	perf report -i "$tmp/$1.data" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }'
}
samples_prec() { sed -n 's/^perfrec: \([0-9]*\) samples.*/\1/p' "$tmp/$1.out"; }
declare -A n bytes
n[perf]=$(samples_perf perf); n[perfz]=$(samples_perf perfz)
n[prec]=$(samples_prec prec); n[raw]=$(samples_prec raw)
bytes[perf]=$(stat -c %s "$tmp/perf.data"); bytes[perfz]=$(stat -c %s "$tmp/perfz.data")
bytes[prec]=$(stat -c %s "$tmp/t.prec"); bytes[raw]=$(stat -c %s "$tmp/raw.prec")

timed perf perf report -i "$tmp/perf.data" --children --stdio
timed perfz perf report -i "$tmp/perfz.data" --children --stdio
timed prec "$ana" report --children "$tmp/t.prec"
timed raw "$ana" report --children "$tmp/raw.prec"

per() { awk -v a="$1" -v b="$2" -v m="$3" 'BEGIN { if (b > 0) printf "%.1f", a * m / b; else print "-" }'; }
cols=(perf perfz prec raw)
row() {   # label, then one value per column
	printf "%-30s" "$1"
	shift
	printf " %14s" "$@"
	echo
}
echo "workload: chain_nofp (-O2 -fomit-frame-pointer) for ${secs}s CPU, -e cpu-clock -F $freq, 8 KiB stacks"
row "" "perf" "perf -z" "perfrec" "perfrec raw"
row "samples" "${n[perf]}" "${n[perfz]}" "${n[prec]}" "${n[raw]}"
row "file bytes" "${bytes[perf]}" "${bytes[perfz]}" "${bytes[prec]}" "${bytes[raw]}"
v=(); for c in "${cols[@]}"; do v+=("$(per "${bytes[$c]}" "${n[$c]}" 1)"); done
row "bytes per sample" "${v[@]}"
v=(); for c in "${cols[@]}"; do v+=("$(cat "$tmp/$c.cpu")"); done
row "recorder CPU s (usr+sys)" "${v[@]}"
v=(); for c in "${cols[@]}"; do v+=("$(per "$(cat "$tmp/$c.cpu")" "${n[$c]}" 1e6)"); done
row "recorder CPU us per sample" "${v[@]}"
v=(); for c in "${cols[@]}"; do v+=("$(awk '{ print $1 }' "$tmp/$c.rt")"); done
row "report --children wall s" "${v[@]}"
v=(); for c in "${cols[@]}"; do v+=("$(awk '{ printf "%.2f", $2 + $3 }' "$tmp/$c.rt")"); done
row "report --children CPU s" "${v[@]}"
echo
echo "bytes: perfrec is $(per "${bytes[perf]}" "${bytes[prec]}" 1)x smaller than perf" \
	"($(per "${bytes[perfz]}" "${bytes[prec]}" 1)x than perf -z); report" \
	"$(awk -v a="$(awk '{ print $1 }' "$tmp/perf.rt")" -v b="$(awk '{ print $1 }' "$tmp/prec.rt")" \
	'BEGIN { if (b > 0) printf "%.0f", a / b; else print "-" }')x faster"
echo "perfrec: $(grep -h 'user stacks' "$tmp/prec.out" || true)"
echo "perfrec raw: $(grep -h 'user stacks' "$tmp/raw.out" || true)"
