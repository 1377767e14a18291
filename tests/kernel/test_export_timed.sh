#!/usr/bin/env bash
# test_export_timed.sh - the exports that keep time, on a recorded workload.
#
# pingpong (tests/kernel/workloads/pingpong.c) spins 200 ms, then its two
# threads pp-ping and pp-pong pass a byte 300 times, each spinning 500 us
# per round: recorded with cpu-clock samples and frame-pointer stacks,
# switch records, off-CPU intervals (when BPF works here) and a counting
# group, so every part of each export has data. Each export is checked by
# its unit test's checker against the analyzer's other outputs for the
# same trace (tests/unit/analyzer/render/test_export_*.sh TRACE), and
# here for what the workload did: both threads named, on CPU in the lanes
# and blocked in off-CPU slices (perfetto), a profile per thread
# (speedscope), spin the hottest function (otlp).
set -euo pipefail
src=${PERFREC_SOURCE_DIR:?}
build=${PERFREC_BUILD_DIR:?}
perfrec=${PERFREC_BIN:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { if [ -n "${CI:-}" ]; then fail "$*"; fi; echo "SKIP: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root"
command -v protoc >/dev/null || skip "protoc not installed"

offcpu=(--off-cpu=0)   # every block an interval: a slice
"$perfrec" record -q --off-cpu=0 -o "$work/probe.prec" -- true 2>/dev/null || offcpu=()
"$perfrec" record -q -e cpu-clock -g --switch-events "${offcpu[@]}" \
  --counters '{task-clock,context-switches}' -o "$work/pp.prec" -- \
  "$build/tests/pingpong" 300 200 0 500 >"$work/pp.out" || fail "record failed"

units=$src/tests/unit/analyzer/render
out=$(bash "$units/test_export_perfetto.sh" "$work/pp.prec") || fail "perfetto checks"
echo "$out"
val() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$out"; }
samples=$(val samples) slices=$(val offcpu_slices) counters=$(val counters)
[ "$samples" -gt 100 ] || fail "perfetto: $samples samples"
[ "$counters" = 2 ] || fail "perfetto: $counters counter events, expected task-clock and context-switches"
[ "${#offcpu[@]}" = 0 ] || [ "$slices" -ge 300 ] ||
  fail "perfetto: $slices off-CPU slices for 300 rounds of blocking"
"$build/analyzer/perfrec-analyze" export "$work/pp.prec" --format perfetto -o "$work/pp.pftrace"
protoc --decode=perfetto.protos.Trace -I "$src/tests/data/perfetto" \
  "$src/tests/data/perfetto/perfetto_trace.proto" <"$work/pp.pftrace" >"$work/pp.txt"
for t in pp-ping pp-pong; do
  grep -q "thread_name: \"$t\"" "$work/pp.txt" || fail "perfetto: no thread named $t"
done
out=$(bash "$units/test_export_speedscope.sh" "$work/pp.prec") || fail "speedscope checks"
echo "$out"
[ "$(val profiles)" -ge 3 ] || fail "speedscope: fewer profiles than pingpong's 3 threads"
out=$(bash "$units/test_export_otlp.sh" "$work/pp.prec") || fail "otlp checks"
echo "$out"
[[ "$out" == *" top=spin,"* ]] || fail "otlp: spin is not the hottest function"
echo "timed exports of pingpong: checked"
