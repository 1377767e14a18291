#!/usr/bin/env bash
# screenshots.sh - the README's pictures of `perfrec-analyze html`, made
# again from a real recording, so they show what the page does today.
#
#   docs/html/screenshots.sh [BUILD_DIR] [TRACE.prec]
#
# Without TRACE (as root) it records the benchmark's workload for 5 s,
# system-wide (tests/bench/html_vs_report.sh's: symprog spinning, pingpong
# passing rounds between two threads), with call stacks, switch events
# and off-CPU intervals. Writes, beside this script:
#   page-1280x800.png    the page as it opens on a laptop screen
#   page-1600x1000.png   the same page with the middle second selected
#                        (#t=START,END: the flame graph and call tree show
#                        only those samples)
# Needs Debian's chromium (headless, no network).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${1:-$src/build}
trace=${2:-}
ana=$build/analyzer/perfrec-analyze
browser=$(command -v chromium || command -v chromium-browser) ||
  { echo "needs chromium (apt-get install chromium)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/html_shots.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$trace" ]; then
  [ "$(id -u)" = 0 ] || { echo "recording needs root (or give a TRACE.prec)" >&2; exit 2; }
  trace=$tmp/bench.prec
  "$build/recorder/perfrec" record -q -a -F 999 -g --switch-events --off-cpu -o "$trace" -- \
    sh -c "'$build/tests/pingpong' 40000 100 & '$build/tests/symprog' 5; wait" >/dev/null
fi
"$ana" html "$trace" -o "$tmp/page.html" --no-progress
shot() {   # shot SIZE FRAGMENT OUT
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$(mktemp -d -p "$tmp")" --window-size="$1" \
    --virtual-time-budget=5000 --screenshot="$3" "file://$tmp/page.html$2" >/dev/null 2>&1
  echo "$3: $(stat -c %s "$3") bytes"
}
shot 1280,800 "" "$here/page-1280x800.png"
# the middle second of the recording, on the tracks' bin edges
read -r t0 bin nbins < <(grep -o '"tracks":{"t0":[0-9]*,"bin":[0-9]*,"nbins":[0-9]*' "$tmp/page.html" |
  sed 's/.*"t0":\([0-9]*\),"bin":\([0-9]*\),"nbins":\([0-9]*\)/\1 \2 \3/')
mid=$((t0 + nbins / 2 * bin)) half=$((500000000 / bin * bin))
shot 1600,1000 "#t=$((mid - half)),$((mid + half))" "$here/page-1600x1000.png"
