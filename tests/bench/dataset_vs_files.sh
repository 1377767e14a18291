#!/usr/bin/env bash
# dataset_vs_files.sh - what reading an archive as one dataset costs, in
# one run:
#
#   tests/bench/dataset_vs_files.sh [BUILD_DIR] [RUNS]
#
# A 1-hour archive simulated by tracegen: 60 rotated files of 1 minute
# each (600 copies of the golden 70 ms timeline per file, every copy's
# tids new: 48,000 samples, about 2.7 MB a file), one host, one session.
# 1. `report` over the directory vs the sum of 60 single-file reports
#    (the same samples): wall time. Target: the dataset costs no more.
# 2. A 6-minute window (--time 1800,2160, a tenth of the hour, across
#    file boundaries) vs the whole hour. Target: within 1.5x of the
#    window's share of the data.
# 3. -j1 vs -j2 over the directory.
# 4. Peak RSS over 1, 10, 30 and 60 files. Target: flat.
# CPU seconds (user + sys: the machine may be shared, wall time is shown
# too), medians of RUNS runs (default 3). Figures, never pass/fail.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
runs=${2:-3}
analyze=$build/analyzer/perfrec-analyze
gen=$build/tests/tracegen_cli
tmp=$(mktemp -d /tmp/dataset_vs_files.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/arch/h1"
for i in $(seq 0 59); do
	"$gen" --host h1 --rotated --offset-ms $((i * 60000)) \
		"$tmp/arch/h1/hour.$(printf %02d "$i").prec" 600 65536
done
for n in 1 10 30; do
	mkdir -p "$tmp/first$n"
	for f in $(ls "$tmp"/arch/h1/*.prec | head -"$n"); do ln -s "$f" "$tmp/first$n/"; done
done
echo "archive: 60 files, $(du -sh "$tmp/arch" | cut -f1)"

# median CPU seconds, median wall seconds and peak RSS (KiB) of a
# command, over $runs runs
measure() {
	local cpu=() wall=() rss=()
	for _ in $(seq "$runs"); do
		/usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$@" > /dev/null 2>"$tmp/err" || {
			cat "$tmp/err" >&2; return 1; }
		read -r e u s m < "$tmp/t"
		cpu+=("$(awk "BEGIN { print $u + $s }")"); wall+=("$e"); rss+=("$m")
	done
	med() { printf '%s\n' "$@" | sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
	printf '%s %s %s\n' "$(med "${cpu[@]}")" "$(med "${wall[@]}")" \
		"$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)"
}
sum_single() {   # the 60 files one by one, as one measured command
	for f in "$tmp"/arch/h1/*.prec; do "$analyze" report "$f" -j1 --no-progress > /dev/null; done
}
export -f sum_single
export analyze tmp

read -r dir_s dir_w dir_m < <(measure "$analyze" report "$tmp/arch" -j1 --no-progress)
read -r one_s one_w _ < <(measure bash -c sum_single)
read -r win_s win_w win_m < <(measure "$analyze" report "$tmp/arch" -j1 --no-progress --time 1800,2160)
read -r j2_s j2_w _ < <(measure "$analyze" report "$tmp/arch" -j2 --no-progress)
samples=$("$analyze" report "$tmp/arch" --csv -j1 | sed -n 's/^samples_shown,//p')
wsamples=$("$analyze" report "$tmp/arch" --csv -j1 --time 1800,2160 | sed -n 's/^samples_shown,//p')
rss=()
for n in 1 10 30; do
	read -r _ _ m < <(measure "$analyze" report "$tmp/first$n" -j1 --no-progress)
	rss+=("$m")
done
rss+=("$dir_m")

ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }
printf '\n%-44s %8s %8s %9s %7s\n' "" "CPU s" "wall s" "peak MiB" "ratio"
printf '%-44s %8s %8s %9.1f %7s\n' "report DIR (60 files, $samples samples)" "$dir_s" "$dir_w" \
	"$(awk "BEGIN { print $dir_m / 1024 }")" "1.00"
printf '%-44s %8s %8s %9s %7s\n' "60 x report FILE" "$one_s" "$one_w" "-" "$(ratio "$one_s" "$dir_s")"
printf '%-44s %8s %8s %9.1f %7s\n' "report DIR --time 1800,2160 ($wsamples)" "$win_s" "$win_w" \
	"$(awk "BEGIN { print $win_m / 1024 }")" "$(ratio "$win_s" "$dir_s")"
printf '%-44s %8s %8s %9s %7s\n' "  (window's share of the samples)" "" "" "" "$(ratio "$wsamples" "$samples")"
printf '%-44s %8s %8s %9s %7s\n' "report DIR -j2 (ratio: wall)" "$j2_s" "$j2_w" "-" "$(ratio "$j2_w" "$dir_w")"
printf '\n%-44s' "peak RSS MiB over 1 / 10 / 30 / 60 files"
for m in "${rss[@]}"; do printf ' %7.1f' "$(awk "BEGIN { print $m / 1024 }")"; done
printf '\n'
