#!/usr/bin/env bash
# test_html_browser.sh - `perfrec-analyze html` pages in a real browser.
#
# Chromium (Debian's `chromium`, headless) loads each page from a file,
# with no network, and dumps the document its scripts built (--dump-dom)
# and a screenshot. The page counts its own script errors on the root
# element (data-js-errors, set by a script that runs before the others)
# and sets data-ready="1" when it has drawn everything; the console log
# is searched for uncaught errors too.
#  1. tracegen's hostile trace (a symbol named
#     "</script><img src=x onerror=alert(1)>", markup in a comm, the host
#     name, an event and an object path): the document has no element
#     from the trace (no img, svg, iframe), shows the symbol as text in
#     the flame graph and the tables, and the scripts ran clean.
#     tracegen's golden trace: code without symbols is one "[unknown] in
#     OBJ" box and table row (report's rows per address, grouped).
#  2. a recorded workload (root): symprog spinning in symprog_hot_loop,
#     recorded alone (so other load on the host cannot shrink its frames)
#     with call stacks and switch events: the flame graph has a frame
#     named symprog_hot_loop, the timeline has one lane per online CPU,
#     a process track named symprog with a legend of the tracks' colours,
#     and the scripts ran clean. Then a copy of the page
#     with tests/browser/interact.js inserted is driven like a person
#     would: hover, click to zoom and reset, search, inverted view,
#     timeline zoom, drag and tooltip, a process track's tooltip, click
#     (its thread followed in the CPU lanes) and threads opened and
#     closed, sorting a table.
#     Then no request: the CSP, and Chromium's request log (DevTools
#     protocol) of the hostile and the driven pages holds only their own
#     file:// load, while a probe image added to a copy is seen.
#  4. a selection in the address (a time range, a thread, a process):
#     the flame graph's total is report's over the same samples, the
#     top-functions table report --children --sort sym,dso's rows, the
#     tasks table sched's on-CPU time and switch-ins (symprog, and
#     pingpong's two threads that switch 40,000 times)
#     The counter groups (pingpong recorded with a counter group read
#     every 20 ms): under a time range each counter is the sum of
#     counters --interval's deltas whose tick falls in the range, with
#     its rate; clearing the selection gives back counters' totals
#  5. the call tree's functions against report --children
#  6. a page over a dataset (root): symprog recorded into files rotated
#     every second is one page whose flame graph's total, for the whole
#     and for a time range across a file boundary, is report's over the
#     same files. Several hosts (tracegen's traces, without root, in
#     part 1) make one page with a host selector: the address's host (or
#     the first) is shown, its flame total, top functions and a range's
#     total are report --host's; choosing a host in the selector shows
#     it; --host picks one.
# Screenshots are kept in BUILD/tests/html_browser/ to look at.
set -euo pipefail
build=${PERFREC_BUILD_DIR:?}
source_dir=${PERFREC_SOURCE_DIR:?}
perfrec=${PERFREC_BIN:?}
ana=${PERFREC_ANALYZE_BIN:?}
work=$(mktemp -d)
shots=$build/tests/html_browser
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  # CI installs it (tests/install-deps.sh): a missing browser there is a failure
  [ -n "${CI:-}" ] && fail "chromium is not installed (tests/install-deps.sh installs it)"
  echo "SKIP: no chromium (apt-get install chromium)"; exit 0
fi
[ -x "$ana" ] && [ -x "$build/tests/tracegen_cli" ] || fail "build perfrec-analyze and tracegen_cli first"
mkdir -p "$shots"

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --window-size=1400,1800 --virtual-time-budget=3000)
# dom PAGE NAME: NAME.dom (the document the scripts built), NAME.log (console)
dom() {
  local page=$1 name=$2
  timeout 120 "$browser" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$work")" \
    --enable-logging=stderr --v=0 --dump-dom "file://$page" >"$work/$name.dom" 2>"$work/$name.log" ||
    fail "$name: chromium --dump-dom failed: $(tail -5 "$work/$name.log")"
}

# render PAGE NAME: dom, and a screenshot NAME.png
render() {
  local page=$1 name=$2
  dom "$page" "$name"
  timeout 120 "$browser" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$work")" \
    --screenshot="$shots/$name.png" "file://$page" >/dev/null 2>&1 ||
    fail "$name: chromium --screenshot failed"
  [ "$(stat -c %s "$shots/$name.png")" -gt 20000 ] || fail "$name: the screenshot is (nearly) empty"
}

# clean NAME: the page's scripts ran to the end without an error.
clean() {
  local root
  root=$(grep -o '<html[^>]*>' "$work/$1.dom" | head -1)
  echo "$1: $root"
  case "$root" in *'data-ready="1"'*) ;; *) fail "$1: the page's script did not finish: $root";; esac
  case "$root" in *'data-js-errors="0"'*) ;; *) fail "$1: script errors: $root";; esac
  if grep -E 'CONSOLE.*(Uncaught|Error)' "$work/$1.log"; then
    fail "$1: errors on the console"
  fi
}

# ---- 1. hostile names
"$build/tests/tracegen_cli" --hostile "$work/hostile.prec"
"$ana" html "$work/hostile.prec" -o "$work/hostile.html"
render "$work/hostile.html" hostile
clean hostile
for tag in img svg iframe; do
  if grep -qi "<$tag" "$work/hostile.dom"; then
    fail "hostile: a <$tag> element from the trace is in the document: $(grep -oi "<$tag[^>]*>" "$work/hostile.dom" | head -3)"
  fi
done
sym='&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;'
grep -q "class=\"fr t1\"[^>]*>$sym</div>" "$work/hostile.dom" ||
  fail "hostile: no flame-graph frame shows the symbol as text"
grep -q "<td>$sym</td>" "$work/hostile.dom" || fail "hostile: the table does not show the symbol as text"
echo "hostile: names shown as text, no element injected"
# code without symbols: tracegen's golden trace has samples in bash at an
# address no symbol covers; the page shows one "[unknown] in bash" box and
# table row (report's rows per address, grouped: its sums), never the
# address
"$build/tests/tracegen_cli" "$work/golden.prec"
"$ana" html "$work/golden.prec" -o "$work/golden.html"
dom "$work/golden.html" golden
clean golden
grep -q 'class="fr t1"[^>]*>\[unknown\] in bash</div>' "$work/golden.dom" ||
  fail "golden: no flame-graph box named [unknown] in bash"
if grep -q '\[bash\]+0x' "$work/golden.dom"; then
  fail "golden: an address of bash is still shown: $(grep -o '[^>]*\[bash\]+0x[^<]*' "$work/golden.dom" | head -3)"
fi
"$ana" report --children --sort sym,dso,event --csv "$work/golden.prec" >"$work/golden.csv"
python3 "$source_dir/tests/browser/tablecmp.py" "$work/golden.dom" report rows "$work/golden.csv" \
  sym,dso,event children=0 overhead=0 samples=0 period=0 --rows 100 --group ||
  fail "golden: the grouped top functions differ from report's rows grouped"
grep -q '<td>\[unknown\] in bash</td><td>bash</td>' "$work/golden.dom" ||
  fail "golden: no [unknown] in bash row in the top functions"
echo "golden: code without symbols is one [unknown] in bash box and row"
# two hosts: one page with a host selector; each host's part is that
# host's page (alpha one copy of the golden schedule, beta three: their
# totals differ), the address picks one, a selection applies to it
"$build/tests/tracegen_cli" --host alpha "$work/hosts-a.prec"
"$build/tests/tracegen_cli" --host beta "$work/hosts-b.prec" 3
"$ana" html "$work/hosts-a.prec" "$work/hosts-b.prec" -o "$work/hosts.html"
# hosttotal ARGS: "period,samples" of report --host ARGS over both files
hosttotal() {
  "$ana" report "$@" "$work/hosts-a.prec" "$work/hosts-b.prec" |
    awk '$1=="samples_shown"{s=$2} $1=="total_period"{p=$2} END{print p "," s}'
}
# hostpage FRAGMENT NAME: the page's host and flame total under FRAGMENT
hostpage() {
  dom "$work/hosts.html$1" "$2"
  clean "$2" >&2
  local host total
  host=$(grep -o '<html[^>]*>' "$work/$2.dom" | grep -o 'data-host="[^"]*"' | cut -d'"' -f2)
  total=$(grep -o 'id="fg"[^>]*' "$work/$2.dom" | grep -o 'data-total="[^"]*"' | cut -d'"' -f2)
  [ "$(grep -o '<select id="host-which"[^>]*>\(<option[^>]*>[^<]*</option>\)*' "$work/$2.dom" |
       grep -o '<option' | wc -l)" = 2 ] ||
    fail "$2: the host selector does not list the two hosts"
  [ "$(grep -o '<span class="host">[^<]*' "$work/$2.dom")" = "<span class=\"host\">$host" ] ||
    fail "$2: the header shown is not $host's"
  echo "$host $total"
}
# the flame graph's total on the page: a sample event's (cpu-clock)
want_a=$(hosttotal --host alpha --event cpu-clock) want_b=$(hosttotal --host beta --event cpu-clock)
got=$(hostpage "" hosts-first)
[ "$got" = "alpha $want_a" ] || fail "two hosts, no address: page $got, alpha's report $want_a"
got=$(hostpage "#host=beta" hosts-beta)
[ "$got" = "beta $want_b" ] || fail "#host=beta: page $got, beta's report $want_b"
[ "$want_a" != "$want_b" ] || fail "the two hosts' traces do not differ"
"$ana" report --children --sort sym,dso,event --csv --host beta "$work/hosts-a.prec" \
  "$work/hosts-b.prec" >"$work/hosts-beta.csv"
python3 "$source_dir/tests/browser/tablecmp.py" "$work/hosts-beta.dom" report rows \
  "$work/hosts-beta.csv" sym,dso,event children=0 overhead=0 samples=0 period=0 --rows 100 --group ||
  fail "#host=beta: the top functions are not beta's"
# a selection on beta: its first 70 ms copy (the tracks' bins from its start)
read -r t0 bin < <(grep -o '"tracks":{"t0":[0-9]*,"bin":[0-9]*' "$work/hosts.html" | tail -1 |
  sed 's/.*"t0":\([0-9]*\),"bin":\([0-9]*\)/\1 \2/')
hb=$((t0 + 140 * bin))
want=$(hosttotal --host beta --event cpu-clock --time "0,$(awk -v b="$hb" 'BEGIN{printf "%.9f", b / 1e9}')")
got=$(hostpage "#host=beta&t=$t0,$hb" hosts-sel)
[ "$got" = "beta $want" ] || fail "#host=beta with a range: page $got, report $want"
# choosing beta in the selector (a copy whose script does it once, on a
# page opened without an address) loads the page again with beta's part
sed 's|^</body>$|<script>(function () { var p = document.getElementById("host-which"); if (!/host=/.test(location.hash)) { p.value = "1"; p.dispatchEvent(new Event("change")); } })();</script></body>|' \
  "$work/hosts.html" >"$work/hosts-pick.html"
dom "$work/hosts-pick.html" hosts-pick
clean hosts-pick
grep -o '<html[^>]*>' "$work/hosts-pick.dom" | grep -q 'data-host="beta" data-selection="host=beta"' ||
  fail "choosing beta in the selector did not show beta: $(grep -o '<html[^>]*>' "$work/hosts-pick.dom")"
[ "$(grep -o 'id="fg"[^>]*' "$work/hosts-pick.dom" | grep -o 'data-total="[^"]*"' | cut -d'"' -f2)" = "$want_b" ] ||
  fail "choosing beta in the selector: the flame graph is not beta's"
"$ana" html "$work/hosts-a.prec" "$work/hosts-b.prec" --host beta -o "$work/hosts-one.html"
grep -q '<span class="host">beta</span>' "$work/hosts-one.html" || fail "--host beta: the page is not beta's"
if grep -q '<select id="host-which"' "$work/hosts-one.html"; then fail "--host beta: a host selector on one host's page"; fi
echo "hosts: one page of two, each host's part its own report's; --host beta gives beta's page"

# ---- 2. a recorded workload
if [ "$(id -u)" != 0 ]; then
  echo "SKIP (part 2): recording needs root"; exit 0
fi
[ -x "$perfrec" ] && [ -x "$build/tests/symprog" ] || fail "build perfrec and symprog first"
"$perfrec" record -q -g --switch-events -F 999 -o "$work/t.prec" -- \
  "$build/tests/symprog" 2 >"$work/run.out" || fail "record failed: $(cat "$work/run.out")"
"$ana" html "$work/t.prec" -o "$work/t.html"
echo "page: $(stat -c %s "$work/t.html") bytes"
render "$work/t.html" workload
clean workload
grep -q 'class="fr t1"[^>]*>symprog_hot_loop</div>' "$work/workload.dom" ||
  fail "no flame-graph frame names symprog_hot_loop: $(grep -o 'class="fr t1"[^>]*>[^<]*<' "$work/workload.dom" | head -20)"
cpus=$(getconf _NPROCESSORS_ONLN)
lanes=$(grep -o '<div class="lane" data-cpu="[0-9]*"' "$work/workload.dom" | wc -l)
[ "$lanes" = "$cpus" ] || fail "the timeline has $lanes lanes for $cpus CPUs"
echo "workload: symprog_hot_loop in the flame graph, $lanes lanes for $cpus CPUs"
grep -q '<div class="label tk-proc"[^>]*>[^<]*symprog [0-9]' "$work/workload.dom" ||
  fail "no process track named symprog: $(grep -o '<div class="label tk-proc"[^>]*>[^<]*<' "$work/workload.dom" | head -5)"
grep -q 'class="legend tk-legend"' "$work/workload.dom" || fail "the tracks have no legend"
echo "workload: a track for symprog, with a legend"

# ---- 3. the same page, driven
awk -v js="$source_dir/tests/browser/interact.js" '
  /^<\/body>$/ { print "<script>"; while ((getline l < js) > 0) print l; print "</script>" }
  { sub(/^<html lang="en">$/, "<html lang=\"en\" data-hot=\"symprog_hot_loop\" data-comm=\"symprog\">"); print }' \
  "$work/t.html" >"$work/t-driven.html"
dom "$work/t-driven.html" driven
clean driven
driven=$(grep -o 'data-interact="[^"]*"' "$work/driven.dom" || true)
echo "driven: $driven"
[ -n "$driven" ] || fail "the interaction script did not run"
case "$driven" in *FAIL*) fail "interactions failed: $driven";; esac
for c in hover zoom search inverted timeline tracks select calltree sort; do
  case "$driven" in *"$c=ok"*) ;; *) fail "interaction $c did not run: $driven";; esac
done

# ---- 3b. no network: the page forbids every load but its own inline
# code (CSP), and Chromium's request log (DevTools protocol, Network
# domain) holds only the page's own file:// load, for the hostile page
# and the driven one (every interaction run). A copy with an image from
# the network shows that the log sees what a page asks for, even what
# the CSP refuses.
grep -q "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; " "$work/t.html" ||
  fail "the page has no Content-Security-Policy of default-src 'none'"
# requests PAGE NAME: NAME.req, one line per request (URL, type, result)
requests() {
  python3 "$source_dir/tests/browser/requests.py" "$browser" "file://$1" >"$work/$2.req" ||
    fail "$2: the request log failed"
}
for p in hostile t-driven; do
  requests "$work/$p.html" "$p"
  printf 'file://%s\tDocument\t-\n' "$work/$p.html" | cmp -s - "$work/$p.req" ||
    fail "$p: requests beyond the page's own load: $(cat "$work/$p.req")"
done
sed 's|^</body>$|<img src="http://127.0.0.1:9/probe.png" alt=""></body>|' "$work/t.html" >"$work/probe.html"
requests "$work/probe.html" probe
grep -q '^http://127.0.0.1:9/probe.png	Image	csp$' "$work/probe.req" ||
  fail "the request log did not see the probe's image: $(cat "$work/probe.req")"
echo "no network: each page's only request is its own file; the probe's image shows in the log (blocked: csp)"

# ---- 4. a selection in the address filters the flame graph to what
# report says of the same samples: a time range (a quarter of the trace,
# on the tracks' bin edges, as a drag snaps to them), a thread, a process
# total FLAGS: "period,samples" of report FLAGS over the page's trace
total() {
  "$ana" report "$@" "$work/t.prec" |
    awk '$1=="samples_shown"{s=$2} $1=="total_period"{p=$2} END{print p "," s}'
}
# shown FRAGMENT NAME [PAGE]: the page's (t.html's) flame total
# ("weight,count") under FRAGMENT
shown() {
  dom "${3:-$work/t.html}#$1" "$2"
  clean "$2" >&2
  grep -o 'id="fg"[^>]*' "$work/$2.dom" | grep -o 'data-total="[^"]*"' | cut -d'"' -f2
}
read -r t0 bin nbins < <(grep -o '"tracks":{"t0":[0-9]*,"bin":[0-9]*,"nbins":[0-9]*' "$work/t.html" |
  sed 's/.*"t0":\([0-9]*\),"bin":\([0-9]*\),"nbins":\([0-9]*\)/\1 \2 \3/')
a=$((t0 + nbins / 4 * bin)) b=$((t0 + nbins / 2 * bin))
range=$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.9f,%.9f", a / 1e9, b / 1e9}')
want=$(total --time "$range") got=$(shown "t=$a,$b" sel-time)
echo "selection $range s: page $got, report --time $want"
[ -n "$got" ] && [ "$got" = "$want" ] || fail "time selection: page $got, report --time $range $want"
case "$want" in *,0) fail "the time selection holds no sample";; esac
read -r pid tid < <("$ana" sched "$work/t.prec" | awk '$1=="symprog"{print $2, $3; exit}')
want=$(total --tid "$tid") got=$(shown "tid=$tid" sel-tid)
echo "selection tid $tid: page $got, report --tid $want"
[ "$got" = "$want" ] || fail "thread selection: page $got, report --tid $tid $want"
want=$(total --pid "$pid" --time "$range") got=$(shown "t=$a,$b&pid=$pid" sel-pid)
echo "selection pid $pid in $range s: page $got, report --pid --time $want"
[ "$got" = "$want" ] || fail "process and time selection: page $got, report $want"
# The tables follow the same selections: the top functions are report
# --children --sort sym,dso's rows over the selected samples, exactly
# (when this page's trees are not pruned, every row is listed), and the
# tasks table's on-CPU time and switch-ins are sched's over the range
# (runs are split at bin edges: exact too).
# tables NAME DOM-NAME TRACE TOLERANCES -- ARGS: the page's tables against
# report and sched ARGS
tables() {
  local name=$1 dom=$2 trace=$3 ftol=$4; shift 5
  "$ana" report --children --sort sym,dso --csv "$@" "$trace" >"$work/$name-r.csv"
  # shellcheck disable=SC2086
  python3 "$source_dir/tests/browser/tablecmp.py" "$work/$dom.dom" report rows \
    "$work/$name-r.csv" sym,dso $ftol --group || fail "$name: the top-functions table differs from report $*"
  "$ana" sched --csv "$@" "$trace" >"$work/$name-s.csv"
  if grep -q '^switch_records,0$' "$work/$name-s.csv"; then
    # sched --time measures from the switch records inside its window:
    # when the workload ran through the whole window without one (an idle
    # CPU never preempts it), sched lists no task, while the page's tracks
    # know the run that spans the window. The one thread then ran the
    # whole range.
    python3 - "$work/$dom.dom" "$source_dir/tests/browser" "$range" <<'PY' ||
import sys
sys.path.insert(0, sys.argv[2])
from tablecmp import Tables
p = Tables("sched", "tasks")
p.feed(open(sys.argv[1]).read())
a, b = (float(x) for x in sys.argv[3].split(","))
want = (b - a) * 1e3
got = [float(r["oncpu_ms"]) for r in p.rows if r.get("oncpu_ms")]
print("no switch record in the window: the page's tasks %s ms on CPU, the window %.3f ms" % (got, want))
sys.exit(0 if len(got) == 1 and abs(got[0] - want) <= want * 0.002 else 1)
PY
      fail "$name: the page's tasks table is not the one run across the window"
    return
  fi
  python3 "$source_dir/tests/browser/tablecmp.py" "$work/$dom.dom" sched tasks \
    "$work/$name-s.csv" tid oncpu_ms=0.002 switch_ins=0 --rows 100 ||
    fail "$name: the tasks table differs from sched $*"
}
exact="children=0 overhead=0 samples=0 period=0 --rows 100"
near="children=1 overhead=1 --cover children=1.5"
if grep -q '"pruned":[1-9]' "$work/t.html"; then
  echo "note: the workload's flame trees were pruned: its tables are compared within a point"
  exact=$near
fi
tables time sel-time "$work/t.prec" "$exact" -- --time "$range"
tables tid sel-tid "$work/t.prec" "$exact" -- --tid "$tid"
tables pid sel-pid "$work/t.prec" "$exact" -- --pid "$pid" --time "$range"
# threads that switch: pingpong's two threads pass a byte 20,000 times
# (its tables have rows per thread); its trees keep 0.05% boxes, and a
# function's pruned call paths are missing from its weights (each under
# 0.05% of the trace, more of a part of it), so its top functions are
# compared within a point, all those above 1.5% listed
"$perfrec" record -q -g --switch-events -F 999 -o "$work/pp.prec" -- \
  "$build/tests/pingpong" 20000 300 0 50 >"$work/pp.out" || fail "record pingpong failed: $(cat "$work/pp.out")"
read -r ppid ping < <(sed -n 's/.*pid \([0-9]*\), ping tid \([0-9]*\).*/\1 \2/p' "$work/pp.out")
"$ana" html "$work/pp.prec" -o "$work/pp.html"
read -r t0 bin nbins < <(grep -o '"tracks":{"t0":[0-9]*,"bin":[0-9]*,"nbins":[0-9]*' "$work/pp.html" |
  sed 's/.*"t0":\([0-9]*\),"bin":\([0-9]*\),"nbins":\([0-9]*\)/\1 \2 \3/')
pa=$((t0 + nbins / 3 * bin)) pb=$((t0 + nbins * 2 / 3 * bin))
prange=$(awk -v a="$pa" -v b="$pb" 'BEGIN{printf "%.9f,%.9f", a / 1e9, b / 1e9}')
shown "t=$pa,$pb" pp-time "$work/pp.html" >/dev/null
tables pp-time pp-time "$work/pp.prec" "$near" -- --time "$prange"
shown "tid=$ping" pp-tid "$work/pp.html" >/dev/null
tables pp-tid pp-tid "$work/pp.prec" "$near" -- --tid "$ping"
shown "t=$pa,$pb&pid=$ppid" pp-pid "$work/pp.html" >/dev/null
tables pp-pid pp-pid "$work/pp.prec" "$near" -- --pid "$ppid" --time "$prange"
grep -q '<table class="t" data-section="tasks" data-selected="[23]"' "$work/pp-time.dom" ||
  fail "pingpong's range: the tasks table does not list its threads"
# html --diff: the same page, whose differential flame graph stays whole
# under a selection (the base side has no per-bin data)
"$ana" html --diff "$work/t.prec" "$work/t.prec" -o "$work/diff.html"
whole=$(grep -o 'id="fg"[^>]*' "$work/workload.dom" | grep -o 'data-total="[^"]*"' | cut -d'"' -f2)
got=$(shown "t=$a,$b" diff "$work/diff.html")
echo "html --diff with a selection: $got (whole: $whole)"
[ -n "$whole" ] && [ "$got" = "$whole" ] || fail "html --diff under a selection: $got, whole $whole"
# the counter groups under a time range: each counter's ticks (snapshots
# of the group every 20 ms) whose time falls in the range, summed, as
# `counters --interval` prints them; clearing the selection (the button,
# in a copy whose script presses it) gives back `counters`' totals. The
# range is on edges of 32 tracks' bins, which the flame graph's bins
# (merged by powers of 2) keep: the range shown is the one given.
"$perfrec" record -q --switch-events -F 999 --counters '{task-clock,context-switches}' \
  --interval 20ms -o "$work/cnt.prec" -- "$build/tests/pingpong" 20000 300 0 50 >"$work/cnt.out" ||
  fail "record with counters failed: $(cat "$work/cnt.out")"
"$ana" html "$work/cnt.prec" -o "$work/cnt.html"
"$ana" counters --interval --csv "$work/cnt.prec" >"$work/cnt-int.csv"
"$ana" counters --csv "$work/cnt.prec" >"$work/cnt.csv"
read -r t0 bin nbins < <(grep -o '"tracks":{"t0":[0-9]*,"bin":[0-9]*,"nbins":[0-9]*' "$work/cnt.html" |
  sed 's/.*"t0":\([0-9]*\),"bin":\([0-9]*\),"nbins":\([0-9]*\)/\1 \2 \3/')
ca=$((t0 + nbins / 4 / 32 * 32 * bin)) cb=$((t0 + nbins * 3 / 4 / 32 * 32 * bin))
dom "$work/cnt.html#t=$ca,$cb" cnt-sel
clean cnt-sel
grep -q '<table class="t" data-section="counters" data-selected="2"' "$work/cnt-sel.dom" ||
  fail "counters under a range: the table was not recomputed"
python3 "$source_dir/tests/browser/ticksum.py" "$work/cnt-sel.dom" "$work/cnt-int.csv" "$ca" "$cb" ||
  fail "counters under the range $ca,$cb ns differ from counters --interval's ticks"
sed 's|^</body>$|<script>document.getElementById("sel-clear").click();</script></body>|' \
  "$work/cnt.html" >"$work/cnt-clear.html"
dom "$work/cnt-clear.html#t=$ca,$cb" cnt-clear
clean cnt-clear
grep -o '<html[^>]*>' "$work/cnt-clear.dom" | grep -q 'data-selection=""' ||
  fail "the clear button did not clear the selection: $(grep -o '<html[^>]*>' "$work/cnt-clear.dom")"
python3 "$source_dir/tests/browser/tablecmp.py" "$work/cnt-clear.dom" counters counters \
  "$work/cnt.csv" group,event raw=0 scaled=0 per_sec=0 running_pct=0 --rows 100 ||
  fail "counters after clearing the selection differ from counters' totals"

# ---- 5. the functions beside the flame graph: the call tree's totals per
# function (a function inside itself once) are report --children's, for
# the whole trace and for a selection. The page's trees are pruned at
# 0.05% of the weight (a function's light call sites merged into grey
# boxes): this workload's are not ("pruned":0), so they are exact.
# funcs NAME REPORT-ARGS: the first 6 functions of NAME.dom against report
funcs() {
  local name=$1; shift
  "$ana" report --children --sort sym --csv "$@" "$work/t.prec" >"$work/$name.csv"
  grep -o '<tr data-name="[^"]*" data-total="[0-9]*" data-self="[0-9]*"' "$work/$name.dom" |
    sed 's/<tr data-name="\([^"]*\)" data-total="\([0-9]*\)" data-self="\([0-9]*\)"/\1 \2 \3/' |
    awk -v csv="$work/$name.csv" -v what="$name" '
      BEGIN { FS = ","
              while ((getline l < csv) > 0) {
                n = split(l, f, ",")
                if (f[1] == "total_period") total = f[2]
                if (n == 5 && f[1] ~ /^[0-9.]+$/) { ch[f[5]] = f[1]; self[f[5]] = f[4] } }
              FS = " " }
      NR > 6 { next }   # (not head: grep would die of SIGPIPE under pipefail)
      { got = sprintf("%.2f", 100 * $2 / total)
        if (!($1 in ch)) { print what ": " $1 " is not in the report"; bad = 1; next }
        if (got != ch[$1] || $3 != self[$1]) {
          print what ": " $1 ": page " got "% self " $3 ", report " ch[$1] "% self " self[$1]; bad = 1 }
        rows++ }
      END { if (!rows) { print what ": no function rows"; bad = 1 }
            if (!bad) print what ": " rows " functions equal to report --children"; exit bad }' ||
    fail "functions of $name differ from report --children"
}
grep -q '"pruned":0' "$work/t.html" || echo "note: the page's trees were pruned"
funcs workload
funcs sel-tid --tid "$tid"
funcs sel-pid --pid "$pid" --time "$range"

# ---- 6. rotated files: one page, the totals of report over the same files
mkdir "$work/rot"
"$perfrec" record -q -g --switch-events -F 999 --rotate-time 1s -o "$work/rot/r.prec" -- \
  "$build/tests/symprog" 3 >"$work/rot.out" || fail "rotated record failed: $(cat "$work/rot.out")"
nfiles=$(find "$work/rot" -name 'r.*.prec' | wc -l)
[ "$nfiles" -ge 3 ] || fail "the rotated recording made $nfiles files"
"$ana" html "$work/rot" -o "$work/rot.html"
render "$work/rot.html" rotated
clean rotated
grep -q "$nfiles files" "$work/rot.html" || fail "rotated: the header does not count $nfiles files"
rtotal() {
  "$ana" report "$@" "$work/rot" |
    awk '$1=="samples_shown"{s=$2} $1=="total_period"{p=$2} END{print p "," s}'
}
want=$(rtotal) got=$(grep -o 'id="fg"[^>]*' "$work/rotated.dom" | grep -o 'data-total="[^"]*"' | cut -d'"' -f2)
echo "rotated ($nfiles files): page $got, report $want"
[ -n "$got" ] && [ "$got" = "$want" ] || fail "rotated: page $got, report $want"
# a range from the middle of the first file into the third, on bin edges
read -r t0 bin nbins < <(grep -o '"tracks":{"t0":[0-9]*,"bin":[0-9]*,"nbins":[0-9]*' "$work/rot.html" |
  sed 's/.*"t0":\([0-9]*\),"bin":\([0-9]*\),"nbins":\([0-9]*\)/\1 \2 \3/')
a=$((t0 + nbins / 8 * bin)) b=$((t0 + nbins * 3 / 4 * bin))
range=$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.9f,%.9f", a / 1e9, b / 1e9}')
want=$(rtotal --time "$range") got=$(shown "t=$a,$b" rot-time "$work/rot.html")
echo "rotated, selection $range s: page $got, report --time $want"
[ -n "$got" ] && [ "$got" = "$want" ] || fail "rotated time selection: page $got, report --time $want"
case "$want" in *,0) fail "the rotated time selection holds no sample";; esac
echo "html browser: ok (screenshots in $shots)"
