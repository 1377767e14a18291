#!/usr/bin/env bash
# profile_recorder.sh - where perfrec record spends its CPU.
#
#   tests/bench/profile_recorder.sh [BUILD_DIR] [SECONDS] [EXTRA RECORD ARGS...]
#
# Runs a mix of record_vs_perf_atonce.sh (MIX=switch, the default:
# pingpong beside `perfrec record -a -F 10000 -g --switch-events -e
# cpu-clock`; MIX=deep, a gcc build; MIX=redis: mix_lib.sh) and samples
# the recorder itself with perf (cpu-clock, 2 kHz, -p its pid, with
# callchains) from a second after its start to its exit (it records for
# SECONDS + 1, default 5 + 1). Prints the recorder's CPU by
# thread, its top functions (self time, flat) and the callers that hold
# the most of it (children), so a change to the recorder is measured
# where it lands. perf records perfrec from outside: its own cost is not
# in the figures. KEEP=DIR keeps the profile and the trace there.
# Needs root and perf; run it by hand.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
secs=${2:-5}
shift 2 2>/dev/null || shift $# 2>/dev/null || true
extra=("$@")
perfrec=$build/recorder/perfrec
tmp=$(mktemp -d /tmp/profile_recorder.XXXXXX)
# shellcheck source=mix_lib.sh
. "$(dirname "$0")/mix_lib.sh"
trap 'mix_stop; [ -n "${rec:-}" ] && kill -INT "$rec" 2>/dev/null || true; rm -rf "$tmp"' EXIT
[ -x "$perfrec" ] || { echo "missing $perfrec: build first" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf not installed" >&2; exit 2; }

mix_start "${MIX:-switch}" "$src" "$build" "$tmp" || exit $?
sleep 0.5
"$perfrec" record "${mix_opts[@]}" "${extra[@]}" \
	-o "$tmp/t.prec" -- sleep $((secs + 1)) >"$tmp/prec.out" 2>&1 &
rec=$!
sleep 1   # past startup (kallsyms, /proc walk)
# to the recorder's exit: the symbol tables it writes at the end included
perf record -q -g -e cpu-clock -F 2000 -p "$rec" -o "$tmp/prof.data" \
	>/dev/null 2>&1 &
prof=$!
wait "$rec" || true
rec=
sleep 1
kill -INT "$prof" 2>/dev/null || true
wait "$prof" || true
mix_stop

echo "perfrec: $(grep -h 'records in' "$tmp/prec.out" || true)"
echo
echo "recorder CPU by thread:"
perf report -i "$tmp/prof.data" --stdio --no-children --sort comm -g none 2>/dev/null |
	grep -v '^#' | grep -v '^$' | head -8 || true
echo
echo "top functions (self):"
perf report -i "$tmp/prof.data" --stdio --no-children --sort dso,sym -g none 2>/dev/null |
	grep -v '^#' | grep -v '^$' | head -30 || true
echo
echo "callers holding the most (children):"
perf report -i "$tmp/prof.data" --stdio --children --sort sym -g none 2>/dev/null |
	grep -v '^#' | grep -v '^$' | head -30 || true
if [ -n "${KEEP:-}" ]; then
	mkdir -p "$KEEP"
	cp "$tmp/prof.data" "$tmp/t.prec" "$KEEP/"
	echo "kept $KEEP/prof.data $KEEP/t.prec"
fi
