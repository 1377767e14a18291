#!/usr/bin/env bash
# html_vs_report.sh - what `perfrec-analyze html` costs next to `report`.
#
#   tests/bench/html_vs_report.sh [BUILD_DIR] [TRACE.prec ...]
#
# For each trace: packets in it, then best wall-clock and CPU seconds of 3
# runs and the peak resident memory of
#   report              (default keys comm,dso,sym)
#   report --children   (html's top-functions table is this, by sym,dso)
#   sched               (html's timeline pass adds to this)
#   html                (the page: both passes plus the flame trees)
# and the page's size. Without TRACE arguments it writes a synthetic
# trace of about 2M packets with tracegen_cli (12000 copies of the golden
# timeline) and, as root with RECORD_SECONDS set (e.g. 60), also records a
# system-wide trace of that long: symprog spinning all along, pingpong
# passing 400000 rounds (about 1.6M switch records), under
# perfrec record -a -F 4000 -g --switch-events.
# Then the page against trace length and thread count: synthetic traces of
# 10, 60 and 300 s (tracegen copies of 100 ms, 3 new threads each: 300,
# 1800 and 9000 threads; LENGTHS="10 60" to change them), and the traces
# above: page bytes, generation time (best of 3) and time to first paint
# in headless Chromium (the page's own data-ready-ms: from the start of
# navigation to the timeline, tracks and flame graph drawn; best of 3).
# SCALING_ONLY=1 runs only this second part.
# Figures only, never pass/fail; run it by hand.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
shift || true
ana=$build/analyzer/perfrec-analyze
tmp=$(mktemp -d /tmp/html_vs_report.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
[ -x "$ana" ] || { echo "missing $ana: build first (tests/build.sh $build)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }

traces=("$@")
if [ ${#traces[@]} -eq 0 ]; then
  echo "writing a synthetic trace (tracegen, 12000 copies) ..."
  "$build/tests/tracegen_cli" "$tmp/synthetic.prec" 12000
  traces+=("$tmp/synthetic.prec")
  if [ -n "${RECORD_SECONDS:-}" ] && [ "$(id -u)" = 0 ]; then
    echo "recording ${RECORD_SECONDS} s system-wide (symprog + pingpong) ..."
    "$build/recorder/perfrec" record -q -a -F 4000 -g --switch-events -o "$tmp/recorded.prec" -- \
      sh -c "'$build/tests/pingpong' 400000 100 & '$build/tests/symprog' $RECORD_SECONDS; wait" \
      >/dev/null
    traces+=("$tmp/recorded.prec")
  fi
fi

# measure NAME CMD...: best wall and CPU seconds of 3 runs, largest peak RSS
measure() {
  local name=$1 best=1e9 bestcpu=1e9 rss=0 t0 t1 line
  shift
  for _ in 1 2 3; do
    t0=$(date +%s.%N)
    /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" ||
      { echo "failed: $* ($(tail -2 "$tmp/err"))" >&2; exit 1; }
    t1=$(date +%s.%N)
    read -r best bestcpu rss < <(awk -v t0="$t0" -v t1="$t1" -v b="$best" -v c="$bestcpu" -v r="$rss" \
      '{ w = t1 - t0; cpu = $1 + $2; if (w > b) w = b; if (cpu > c) cpu = c; m = $3 > r ? $3 : r
         printf "%.3f %.3f %d\n", w, cpu, m }' "$tmp/time")
  done
  printf "  %-18s %7.2f s wall %7.2f s CPU %7.1f MB peak RSS\n" "$name" "$best" "$bestcpu" \
    "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
}

for t in "${traces[@]}"; do
  [ -n "${SCALING_ONLY:-}" ] && break
  packets=$("$ana" info "$t" --csv | awk -F, '/^# packets/ { on = 1; getline; next }
           /^#/ { on = 0 } on && $2 ~ /^[0-9]+$/ { s += $2 } END { print s + 0 }')
  echo "$(basename "$t"): $(stat -c %s "$t") bytes, $packets packets"
  measure report "$ana" report "$t" --no-progress
  measure "report --children" "$ana" report "$t" --children --sort sym,dso --no-progress
  measure sched "$ana" sched "$t" --no-progress
  measure html "$ana" html "$t" -o "$tmp/page.html" --no-progress
  echo "  page: $(stat -c %s "$tmp/page.html") bytes"
done

# paint PAGE: best data-ready-ms of 3 headless Chromium loads ("-" without one)
browser=$(command -v chromium || command -v chromium-browser || true)
paint() {
  local best="" ms
  [ -n "$browser" ] || { echo "-"; return; }
  for _ in 1 2 3; do
    ms=$(timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic \
      --no-first-run --disable-background-networking --disable-component-update --disable-sync \
      --user-data-dir="$(mktemp -d -p "$tmp")" --dump-dom "file://$1" 2>/dev/null |
      grep -o 'data-ready-ms="[0-9]*"' | tr -dc '0-9' || true)
    [ -n "$ms" ] && { [ -z "$best" ] || [ "$ms" -lt "$best" ]; } && best=$ms
  done
  echo "${best:--}"
}

# page NAME TRACE: one row of the scaling table
page() {
  local best=1e9 t0 t1 threads
  for _ in 1 2 3; do
    t0=$(date +%s.%N)
    "$ana" html "$2" -o "$tmp/scale.html" --no-progress
    t1=$(date +%s.%N)
    best=$(awk -v a="$t0" -v b="$t1" -v c="$best" 'BEGIN { w = b - a; print w < c ? w : c }')
  done
  threads=$("$ana" sched "$2" --csv --no-progress 2>/dev/null | awk -F, '$1 == "tasks" { n = $2 } END { print n + 0 }')
  printf "  %-16s %8s %10d %8.2f s %8s ms\n" "$1" "$threads" "$(stat -c %s "$tmp/scale.html")" \
    "$best" "$(paint "$tmp/scale.html")"
}

echo "the page against trace length and threads:"
printf "  %-16s %8s %10s %10s %11s\n" trace threads "page bytes" generation "first paint"
for secs in ${LENGTHS:-10 60 300}; do
  "$build/tests/tracegen_cli" "$tmp/len$secs.prec" $((secs * 10))
  page "tracegen ${secs} s" "$tmp/len$secs.prec"
  rm -f "$tmp/len$secs.prec"
done
for t in "${traces[@]}"; do
  page "$(basename "$t")" "$t"
done
