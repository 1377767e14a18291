#!/usr/bin/env bash
# test_diff_e2e.sh - `perfrec-analyze diff` finds the shift a workload made,
# and agrees with `perf diff`.
#
# splitspin (tests/kernel/workloads/splitspin.c) puts a counted share of
# its CPU time in split_a and the rest in split_b: 20% in the base run,
# 70% in the new one, so the change is +50 points in split_a and -50 in
# split_b. Each run is recorded by perfrec (from its exec) and by perf
# record -p at the same time (splitspin waits on a fifo until perf's
# events are on): both tools sample the same CPU seconds. The event is
# cpu-clock:u: kernel time in the workload's comm (preemption, interrupts:
# 1-2% of a run on a busy VM, and it moves with the load) would take its
# share from both functions and eat the 2-point margin; user samples are
# the program's own split (and hardware events do not work on this VM). Then
# `perfrec-analyze diff` of the two .prec files and `perf diff -c delta`
# of the two perf.data files must each show +50/-50 within 2 points, and
# be within 2 points of each other (different samplings of the same
# runs). The diff's JSON carries the CSV's numbers, and html --diff
# embeds both sides' weights with the same change, and draws split_a red
# and split_b blue in Chromium (when installed). (Windows of one trace,
# --base-time/--new-time, are checked on synthetic traces in
# tests/unit/analyzer/reports/test_diff.c.)
set -euo pipefail
build=${PERFREC_BUILD_DIR:?}
perfrec=${PERFREC_BIN:?}
ana=${PERFREC_ANALYZE_BIN:?}
work=$(mktemp -d)
rec_pid= perf_pid=
cleanup() {
  for p in $rec_pid $perf_pid; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 0; }
wl_bin=$build/tests/splitspin
[ -x "$perfrec" ] && [ -x "$ana" ] && [ -x "$wl_bin" ] ||
  fail "build perfrec, perfrec-analyze and splitspin first"

secs=2
freq=4000
have_perf=0
if command -v perf >/dev/null &&
   perf record -q -e cpu-clock -o "$work/probe.data" -- true >/dev/null 2>&1; then
  have_perf=1
fi

# record PCT: splitspin PCT recorded by perfrec into $work/PCT.prec and,
# at the same time, by perf into $work/PCT.data
record() {
  local pct=$1 wl=
  rm -f "$work/go" "$work/perf.ctl" "$work/perf.ack"
  mkfifo "$work/go" "$work/perf.ctl" "$work/perf.ack"
  exec 7<>"$work/go"
  "$perfrec" record -e cpu-clock:u -F $freq -o "$work/$pct.prec" -- \
    "$wl_bin" "$pct" $secs "$work/go" >"$work/run$pct.out" 2>&1 &
  rec_pid=$!
  if [ $have_perf = 1 ]; then
    for _ in $(seq 300); do
      wl=$(pgrep -x -P "$rec_pid" splitspin) && break
      sleep 0.1
    done
    [ -n "$wl" ] || fail "perfrec did not start splitspin within 30 s: $(cat "$work/run$pct.out")"
    perf record -q -e cpu-clock:u -F $freq -p "$wl" -D -1 \
      --control "fifo:$work/perf.ctl,$work/perf.ack" -o "$work/$pct.data" \
      >"$work/perf$pct.out" 2>&1 &
    perf_pid=$!
    exec 8<>"$work/perf.ctl" 9<>"$work/perf.ack"
    echo enable >&8
    local ack=
    read -r -t 60 ack <&9 || true
    [ "$ack" = ack ] || fail "perf record -p did not enable its events within 60 s: $(cat "$work/perf$pct.out")"
  fi
  echo go >&7
  wait "$rec_pid" || fail "record $pct: $(cat "$work/run$pct.out")"
  rec_pid=
  if [ $have_perf = 1 ]; then
    wait "$perf_pid" || fail "perf record -p: $(cat "$work/perf$pct.out")"
    perf_pid=
    exec 8>&- 9>&-
  fi
  exec 7>&-
}
record 20
record 70

near() {   # near A B TOL: |A - B| <= TOL
  awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}

# ---- ours: CSV rows delta,base,new,base_samples,new_samples,sym
"$ana" diff "$work/20.prec" "$work/70.prec" --csv --no-progress >"$work/diff.csv" ||
  fail "diff failed"
"$ana" diff "$work/20.prec" "$work/70.prec" --no-progress >"$work/diff.txt"
echo "perfrec-analyze diff:"; head -14 "$work/diff.txt"
row() {   # row SYM FIELD: FIELD (1 delta, 2 base, 3 new, 4/5 samples) of SYM's row
  awk -F, -v s="$1" -v f="$2" '/^# rows/ { r = 1; next } r && $6 == s { print $f; exit }' \
    "$work/diff.csv" | sed 's/^+//'
}
a_delta=$(row split_a 1) b_delta=$(row split_b 1)
[ -n "$a_delta" ] && [ -n "$b_delta" ] || fail "diff has no split_a/split_b rows"
near "$a_delta" 50 2 || fail "split_a changed by $a_delta points, expected +50 (+-2)"
near "$b_delta" -50 2 || fail "split_b changed by $b_delta points, expected -50 (+-2)"
near "$(row split_a 2)" 20 2 || fail "split_a's base share is $(row split_a 2)%, expected 20"
near "$(row split_a 3)" 70 2 || fail "split_a's new share is $(row split_a 3)%, expected 70"
# ~8000 samples a run at 4000 Hz for 2 s: fewer than 2000 and the noise nears 2 points
base_n=$(awk -F, '/^base_samples,/ { print $2 }' "$work/diff.csv")
[ "${base_n:-0}" -ge 2000 ] || fail "only ${base_n:-0} samples in the base run"
# the two largest changes come first, in every output
head -1 <(awk -F, '/^# rows/ { getline; getline; print $6 }' "$work/diff.csv") |
  grep -qE '^split_[ab]$' || fail "the first row is not split_a or split_b"
"$ana" diff "$work/20.prec" "$work/70.prec" --json --no-progress >"$work/diff.json"
python3 - "$work/diff.json" "$a_delta" <<'EOF' || fail "JSON rows differ from the CSV"
import json, sys
d = json.load(open(sys.argv[1]))
a = [r for r in d["rows"] if r["sym"] == "split_a"][0]
assert abs(a["delta"] - float(sys.argv[2])) < 0.006, a
assert d["rows"][0]["sym"] in ("split_a", "split_b"), d["rows"][0]
EOF

# ---- html --diff: NEW's page, every tree node with both sides' weights
"$ana" html --diff "$work/20.prec" "$work/70.prec" -o "$work/diff.html" --no-progress ||
  fail "html --diff failed"
python3 - "$work/diff.html" <<'EOF' || fail "html --diff data block"
import json, re, sys
page = open(sys.argv[1]).read()
data = json.loads(re.search(r'<script type="application/json" id="perfrec-data">(.*?)</script>',
                            page, re.S).group(1))
assert data.get("diff") is True
f = data["flames"][0]
names = data["names"]
for tree in (f["caller"], f["callee"]):
    assert len(tree["b"]) == len(tree["w"]), "one base weight per node"
# split_a's inverted-tree node (on top): its share on each side
t = f["callee"]
i = [k for k, n in enumerate(t["n"]) if n >= 0 and names[n] == "split_a" and t["d"][k] == 0][0]
new, base = 100 * t["w"][i] / f["weight"], 100 * t["b"][i] / f["base"]
print("html --diff: split_a %.2f%% -> %.2f%%" % (base, new))
assert abs(new - base - 50) <= 2, (base, new)
EOF

# ... and in a browser (when there is one): the scripts run clean, and
# the flame graph draws split_a red (grew) and split_b blue (shrank)
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$browser" ]; then
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --window-size=1400,1000 --virtual-time-budget=3000 \
    --user-data-dir="$work/chromium" --dump-dom "file://$work/diff.html" \
    >"$work/diff.dom" 2>/dev/null || fail "chromium --dump-dom of the diff page failed"
  python3 - "$work/diff.dom" <<'EOF' || fail "the differential flame graph in the browser"
import re, sys
dom = open(sys.argv[1]).read()
root = re.search(r'<html[^>]*>', dom).group(0)
assert 'data-ready="1"' in root and 'data-js-errors="0"' in root, root
def rgb(name):
    m = re.search(r'<div class="fr[^"]*" style="[^"]*background: rgb\((\d+), (\d+), (\d+)\)[^"]*">'
                  + name + '</div>', dom)
    assert m, name + " is not drawn"
    return [int(x) for x in m.groups()]
a, b = rgb("split_a"), rgb("split_b")
print("browser: split_a rgb%s, split_b rgb%s" % (tuple(a), tuple(b)))
assert a[0] > 200 and a[2] < 100, a   # red
assert b[2] > 200 and b[0] < 100, b   # blue
EOF
else
  echo "no chromium: the page's data checked, not its drawing"
fi

# ---- perf diff of the same runs
if [ $have_perf = 1 ]; then
  perf diff -c delta -s sym "$work/20.data" "$work/70.data" >"$work/perf-diff.txt" 2>"$work/perf-diff.err" ||
    fail "perf diff: $(head -3 "$work/perf-diff.err")"
  echo "perf diff -c delta -s sym (same runs):"; grep -v '^#' "$work/perf-diff.txt" | head -6
  pdelta() {   # the Delta column of SYM's line, without its sign's '+' and '%'
    awk -v s="$1" '$NF == s && $(NF-1) == "[.]" { d = $(NF-2); gsub(/[+%]/, "", d); print d; exit }' \
      "$work/perf-diff.txt"
  }
  pa=$(pdelta split_a) pb=$(pdelta split_b)
  [ -n "$pa" ] && [ -n "$pb" ] || fail "perf diff shows no split_a/split_b delta"
  printf "%-8s %8s %8s\n" symbol perfrec perf split_a "$a_delta" "$pa" split_b "$b_delta" "$pb"
  near "$pa" 50 2 || fail "perf diff: split_a changed by $pa points, expected +50"
  near "$pb" -50 2 || fail "perf diff: split_b changed by $pb points, expected -50"
  near "$a_delta" "$pa" 2 || fail "split_a: perfrec $a_delta vs perf $pa points"
  near "$b_delta" "$pb" 2 || fail "split_b: perfrec $b_delta vs perf $pb points"
else
  echo "perf unavailable: the diff checked against the workload's split only"
fi
echo "PASS"
