#!/usr/bin/env bash
# test_perfshape.sh - the perf-shaped commands, against perf on the same run.
#
# calltree (tests/kernel/workloads/calltree.c: frame pointers, main ->
# calltree_round -> calltree_alpha | calltree_beta [-> calltree_gamma] ->
# calltree_spin, work 1:2:3) is recorded by `perfrec record -e cpu-clock -g`
# from its exec and, at the same time, by `perf record -e cpu-clock -g -p`
# (hardware events do not work on this VM): the workload waits on a fifo
# until perf's events are on, so both tools sample the same 3 CPU seconds.
# Then:
#  - `perfrec report -g` (forwarded to perfrec-analyze) prints under each
#    of the workload's entries a tree that names the same callers and
#    callees in the same order as `perf report --stdio -g` (--percent-limit 5
#    on both: the kernel's interrupt frames, a fraction of a point, stay
#    out), and the known structure (beta before alpha, gamma before beta's
#    own spin) with shares within 2 points of perf's;
#  - `perfrec script`, folded as FlameGraph's stackcollapse-perf.pl folds
#    perf script's output (tests/kernel/perfshape.py; Debian has no
#    package of FlameGraph), gives the stacks `perf script` gives for the
#    same run, each of the three hot stacks within 2 points of perf's share;
#  - forwarding: `perfrec report|script|info` print what perfrec-analyze
#    prints, `perfrec help report` its help, a missing perfrec-analyze gets
#    an error naming both places searched; --version of both programs.
set -euo pipefail
build=${PERFREC_BUILD_DIR:?}
perfrec=${PERFREC_BIN:?}
ana=${PERFREC_ANALYZE_BIN:?}
here=$(cd "$(dirname "$0")" && pwd)
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
[ -x "$perfrec" ] && [ -x "$ana" ] && [ -x "$build/tests/calltree" ] ||
  fail "build perfrec, perfrec-analyze and calltree first"
# perfrec finds perfrec-analyze beside itself or in PATH
export PATH="$(dirname "$ana"):$PATH"

# ---- forwarding, help, version
v=$("$perfrec" --version | awk '{ print $2 }')
[ -n "$v" ] && [ "$("$ana" --version)" = "perfrec-analyze $v" ] ||
  fail "perfrec-analyze --version: '$("$ana" --version)', perfrec says '$v'"
"$perfrec" help report >"$work/help1.txt" || fail "perfrec help report failed"
"$ana" report --help >"$work/help2.txt"
cmp -s "$work/help1.txt" "$work/help2.txt" || fail "perfrec help report is not the analyzer's help"
grep -q -- '--percent-limit' "$work/help1.txt" || fail "report's help lacks --percent-limit"
"$perfrec" script --help | grep stackcollapse-perf.pl >/dev/null || fail "perfrec script --help"
mkdir "$work/alone"
cp "$perfrec" "$work/alone/perfrec"
set +e
PATH=/nonexistent "$work/alone/perfrec" report x.prec >"$work/miss.out" 2>&1
st=$?
set -e
[ $st = 127 ] || fail "perfrec report without perfrec-analyze exited $st"
grep -q "$work/alone/perfrec-analyze" "$work/miss.out" && grep -q 'PATH' "$work/miss.out" ||
  fail "the error does not name both places: $(cat "$work/miss.out")"
echo "forwarding: $(cat "$work/miss.out")"

have_perf=0
if command -v perf >/dev/null &&
   perf record -q -e cpu-clock -g -o "$work/probe.data" -- true >/dev/null 2>&1; then
  have_perf=1
fi

# ---- one run, both recorders (see test_callgraph_dwarf.sh for the fifos)
secs=3
mkfifo "$work/go" "$work/perf.ctl" "$work/perf.ack"
exec 7<>"$work/go"
"$perfrec" record -e cpu-clock -F 4000 -g -o "$work/t.prec" -- \
  "$build/tests/calltree" $secs "$work/go" >"$work/run.out" 2>&1 &
rec_pid=$!
if [ $have_perf = 1 ]; then
  wl=
  for _ in $(seq 300); do
    wl=$(pgrep -x -P "$rec_pid" calltree) && break
    sleep 0.1
  done
  [ -n "$wl" ] || fail "perfrec did not start calltree within 30 s: $(cat "$work/run.out")"
  perf record -q -e cpu-clock -F 4000 -g -p "$wl" -D -1 \
    --control "fifo:$work/perf.ctl,$work/perf.ack" -o "$work/perf.data" >"$work/perf.out" 2>&1 &
  perf_pid=$!
  exec 8<>"$work/perf.ctl" 9<>"$work/perf.ack"
  echo enable >&8
  ack=
  read -r -t 60 ack <&9 || true
  [ "$ack" = ack ] || fail "perf record -p did not enable its events within 60 s: $(cat "$work/perf.out")"
fi
echo go >&7
wait "$rec_pid" || fail "record: $(cat "$work/run.out")"
rec_pid=
if [ $have_perf = 1 ]; then
  wait "$perf_pid" || fail "perf record -p: $(cat "$work/perf.out")"
  perf_pid=
fi

# ---- forwarded output is the analyzer's, byte for byte
"$perfrec" report -g --comm calltree --percent-limit 5 "$work/t.prec" >"$work/ours.txt" ||
  fail "perfrec report -g failed"
"$ana" report -g --comm calltree --percent-limit 5 "$work/t.prec" >"$work/ours2.txt"
cmp -s "$work/ours.txt" "$work/ours2.txt" || fail "perfrec report differs from perfrec-analyze report"
"$perfrec" script "$work/t.prec" >"$work/ours.script" || fail "perfrec script failed"
"$ana" script "$work/t.prec" | cmp -s - "$work/ours.script" ||
  fail "perfrec script differs from perfrec-analyze script"
"$perfrec" info "$work/t.prec" >/dev/null || fail "perfrec info failed"

python3 "$here/perfshape.py" trees "$work/ours.txt" >"$work/ours.trees"
echo "perfrec report -g --percent-limit 5, trees:"; cat "$work/ours.trees"
fns=(main calltree_round calltree_beta calltree_gamma calltree_alpha calltree_spin)
tree_of() { awk -F'\t' -v s="$2" '$1 == s { print $2; exit }' "$1"; }
# the structure the program fixes, whoever samples it
t=$(tree_of "$work/ours.trees" calltree_round)
[ "$t" = "calltree_round calltree_beta calltree_gamma calltree_spin calltree_spin calltree_alpha calltree_spin" ] ||
  fail "calltree_round's tree: '$t'"
t=$(tree_of "$work/ours.trees" calltree_spin)
case "$t" in
  *"main calltree_round calltree_beta calltree_gamma calltree_spin calltree_spin calltree_alpha calltree_spin") ;;
  *) fail "calltree_spin's callers: '$t'" ;;
esac
# --percent-limit 20 hides calltree_alpha (1/6 of the work) and its branches
"$ana" report -g --comm calltree --percent-limit 20 "$work/t.prec" >"$work/ours20.txt"
if grep -q 'calltree_alpha' "$work/ours20.txt"; then
  fail "--percent-limit 20 left calltree_alpha in"
fi

# ---- script: one sample per line group, in perf script's layout
n_script=$(grep -c '^[^[:space:]]' "$work/ours.script" || true)
n_report=$("$ana" report "$work/t.prec" | awk '$1 == "samples_shown" { print $2 }')
[ "$n_script" = "$n_report" ] || fail "script printed $n_script samples, report counts $n_report"
python3 "$here/perfshape.py" fold "$work/ours.script" calltree >"$work/ours.fold" ||
  fail "stackcollapse-perf.pl would not read script's output"
echo "perfrec script, folded (top):"; head -4 "$work/ours.fold"
hot=(
  'calltree;__libc_start_call_main;main;calltree_round;calltree_beta;calltree_gamma;calltree_spin'
  'calltree;__libc_start_call_main;main;calltree_round;calltree_beta;calltree_spin'
  'calltree;__libc_start_call_main;main;calltree_round;calltree_alpha;calltree_spin'
)
share() { awk -F'\t' -v s="$2" '$2 == s { print $1; f = 1 } END { if (!f) print 0 }' "$1"; }
for s in "${hot[@]}"; do
  a=$(share "$work/ours.fold" "$s")
  awk -v a="$a" 'BEGIN { exit !(a >= 5) }' || fail "script: stack $s holds $a%"
done

if [ $have_perf = 0 ]; then
  echo "perf unavailable: checked against the program's structure only"
  echo PASS
  exit 0
fi
perf report --stdio -g -i "$work/perf.data" --comms calltree --percent-limit 5 \
  >"$work/perf.txt" 2>"$work/perf.err" || fail "perf report: $(head -3 "$work/perf.err")"
python3 "$here/perfshape.py" trees "$work/perf.txt" >"$work/perf.trees"
echo "perf report --stdio -g --percent-limit 5, trees:"; cat "$work/perf.trees"
for fn in "${fns[@]}"; do
  a=$(tree_of "$work/ours.trees" "$fn")
  b=$(tree_of "$work/perf.trees" "$fn")
  [ -n "$b" ] || fail "perf has no entry $fn"
  [ "$a" = "$b" ] || fail "$fn: perfrec's tree '$a', perf's '$b'"
done
# the shares of calltree_round's branches, within 2 points (where a branch
# forks may differ: a fork into a branch under the limit is not shown)
pct() {   # pct FILE NAME: NAME's share in calltree_round's tree
  awk '/^ *[0-9][0-9.]*%.* calltree_round$/ { on = 1; next } /^$/ { on = 0 } on' "$1" |
    grep -o -- "--[0-9.]*%--$2\$" | head -1 | tr -d '%-' | sed "s/$2//"
}
for fn in calltree_beta calltree_gamma calltree_alpha; do
  a=$(pct "$work/ours.txt" $fn); b=$(pct "$work/perf.txt" $fn)
  echo "calltree_round -> $fn: perfrec $a%, perf $b%"
  awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(a > 0 && b > 0 && d >= -2 && d <= 2) }' ||
    fail "calltree_round -> $fn: perfrec $a%, perf $b% (more than 2 points apart)"
done

perf script -i "$work/perf.data" --comms calltree >"$work/perf.script" 2>"$work/perf.err" ||
  fail "perf script: $(head -3 "$work/perf.err")"
python3 "$here/perfshape.py" fold "$work/perf.script" calltree >"$work/perf.fold"
echo "perf script, folded (top):"; head -4 "$work/perf.fold"
printf "%-8s %-8s %s\n" perfrec perf stack
for s in "${hot[@]}"; do
  a=$(share "$work/ours.fold" "$s")
  b=$(share "$work/perf.fold" "$s")
  printf "%-8s %-8s %s\n" "$a" "$b" "$s"
  awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(b > 0 && d >= -2 && d <= 2) }' ||
    fail "stack $s: perfrec $a%, perf $b% of the same run"
done
echo PASS
