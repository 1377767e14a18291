#!/usr/bin/env bash
# profile_recorder.sh - where perfrec record spends its CPU.
#
#   tests/bench/profile_recorder.sh [BUILD_DIR] [SECONDS] [EXTRA RECORD ARGS...]
#
# Runs the switch-heavy mix of record_vs_perf.sh (pingpong beside
# `perfrec record -a -F 10000 -g --switch-events -e cpu-clock`) and
# samples the recorder itself with perf (cpu-clock, 2 kHz, -p its pid)
# for SECONDS (default 5). Prints the recorder's CPU by thread and its top
# functions (self time, flat), so a change to the recorder is measured
# where it lands. perf records perfrec from outside: its own cost is not
# in the figures. Needs root and perf; run it by hand.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
secs=${2:-5}
shift 2 2>/dev/null || shift $# 2>/dev/null || true
extra=("$@")
perfrec=$build/recorder/perfrec
pingpong=$build/tests/pingpong
tmp=$(mktemp -d /tmp/profile_recorder.XXXXXX)
trap 'rm -rf "$tmp"; [ -n "${wl:-}" ] && kill "$wl" 2>/dev/null || true;
      [ -n "${rec:-}" ] && kill -INT "$rec" 2>/dev/null || true' EXIT
for x in "$perfrec" "$pingpong"; do
	[ -x "$x" ] || { echo "missing $x: build first" >&2; exit 2; }
done
command -v perf >/dev/null || { echo "perf not installed" >&2; exit 2; }

"$pingpong" 1000000000 0 0 >/dev/null &
wl=$!
sleep 0.5
"$perfrec" record -a -F 10000 -g --switch-events -e cpu-clock "${extra[@]}" \
	-o "$tmp/t.prec" -- sleep $((secs + 2)) >"$tmp/prec.out" 2>&1 &
rec=$!
sleep 1   # past startup (kallsyms, /proc walk): the steady state
perf record -q -e cpu-clock -F 2000 -p "$rec" -o "$tmp/prof.data" -- sleep "$secs" \
	>/dev/null 2>&1 || true
wait "$rec" || true
rec=
kill "$wl" 2>/dev/null || true
wait "$wl" 2>/dev/null || true
wl=

echo "perfrec: $(grep -h 'records in' "$tmp/prec.out" || true)"
echo
echo "recorder CPU by thread:"
perf report -i "$tmp/prof.data" --stdio --no-children --sort comm 2>/dev/null |
	grep -v '^#' | grep -v '^$' | head -8
echo
echo "top functions (self):"
perf report -i "$tmp/prof.data" --stdio --no-children --sort dso,sym 2>/dev/null |
	grep -v '^#' | grep -v '^$' | head -30
