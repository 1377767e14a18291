#!/usr/bin/env bash
# The README's run command: install, build, record this host for a few
# seconds and print the analysis.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-5}
bash "$src/tests/install-deps.sh"
echo "== building into $src/build (log: $src/build.log)"
bash "$src/tests/build.sh" "$src/build" >"$src/build.log" 2>&1 || {
  tail -30 "$src/build.log"; echo "quickstart: build failed, see $src/build.log" >&2; exit 1; }
out=${PERFREC_OUT:-/tmp/perfrec-quickstart.prec}
if [ ! -x "$src/build/recorder/perfrec" ]; then
  echo "quickstart: the recorder is not built yet (recorder/cli/main.c missing)" >&2
  exit 1
fi
echo "== perfrec record -a -g --switch-events -d $secs -o $out"
"$src/build/recorder/perfrec" record -a -g --switch-events -d "$secs" -o "$out"
echo
echo "== perfrec-analyze info"
"$src/build/analyzer/perfrec-analyze" info "$out"
echo
echo "== perfrec-analyze report (top 20)"
"$src/build/analyzer/perfrec-analyze" report --top 20 "$out"
echo
echo "== perfrec-analyze sched (top 10)"
"$src/build/analyzer/perfrec-analyze" sched --top 10 "$out"
