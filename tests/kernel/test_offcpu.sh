#!/usr/bin/env bash
# test_offcpu.sh - record --off-cpu and --filter on the real kernel (root).
#
#  1. napper (tests/kernel/workloads/napper.c) sleeps 100 x 10 ms in
#     napper_nap <- napper_loop: report --off-cpu --children and export
#     --format folded --off-cpu put ~1 s (within 5% of what napper itself
#     measured) under both functions, the kernel stack starts in __schedule
#     and the state is "sleeping"; the same with the raw_tp fallback
#     program (kernels without BTF), and with --off-cpu=0 (every block an
#     interval) and --off-cpu=1s (every block summed) the totals agree.
#  2. pingpong's two threads: the blocked time per thread from the BPF
#     program agrees within 5% with what `sched` computes from the switch
#     records of the same recording. The two clocks stop a few us apart at
#     every switch (the tracepoint, where the program also runs its stack
#     walks, comes before perf's switch-in record: 2-12 us here, more on a
#     loaded host), so each block is made long (1.5 ms of the other
#     thread's spin) for that offset to stay well under 5% (at 500 us a
#     25 us offset on a busy VM was already 5%).
#  3. --filter pid=A on a system-wide recording keeps only A's samples, and
#     the samples it kept plus those it filtered agree within 10% (per
#     second) with the samples of an unfiltered recording made at the same
#     time (both CPUs busy); a cgroup the
#     test creates filters the same way; a bad expression is refused
#     before recording with the offending part pointed at.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_offcpu offcpu
cg=""
# the test's cgroup goes once its processes are gone (after the kills)
kt_on_exit() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -z "$cg" ] || rmdir "$cg" 2>/dev/null
}
kt_need_root
if ! "$perfrec" record -q --off-cpu -o "$d/probe.prec" -- true 2>"$d/probe.err"; then
  cat "$d/probe.err"
  skip "--off-cpu does not work here: $(head -1 "$d/probe.err")"
fi
# within PCT percent: within A B PCT
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
  exit !(b > 0 && d <= b * p / 100) }'; }
# the value of column COL in the CSV section SECTION: csvcol FILE SECTION COL [KEYCOL KEY]
csvrows() {
  awk -F, -v sec="# $2" '$0 == sec { f = 1; h = 0; next } /^# / { f = 0 }
    f && !h { for (i = 1; i <= NF; i++) col[$i] = i; h = 1; next }
    f && NF { print $col["'"$3"'"] "\t" $col["'"$4"'"] }' "$1"
}

# ---- 1. napper
nap() {  # nap NAME [env...]: record napper, check report and folded export
  local name=$1; shift
  env "$@" "$perfrec" record -q --off-cpu -o "$d/$name.prec" -- "$build/tests/napper" \
    >"$d/$name.out" || fail "$name: record failed"
  local expect_ns; expect_ns=$(awk '{ print $5 }' "$d/$name.out")
  "$analyze" report --off-cpu --children --sort sym --csv "$d/$name.prec" >"$d/$name.csv" ||
    fail "$name: report --off-cpu failed"
  for f in napper_nap napper_loop; do
    local ms; ms=$(csvrows "$d/$name.csv" rows sym children_ms | awk -F'\t' -v f=$f '$1 == f { print $2 }')
    [ -n "$ms" ] || fail "$name: no off-CPU time under $f: $(cat "$d/$name.csv")"
    within "$(awk -v m="$ms" 'BEGIN { print m * 1e6 }')" "$expect_ns" 5 ||
      fail "$name: $f has $ms ms off-CPU, napper slept $expect_ns ns"
    echo "$name: $f $ms ms off-CPU (napper: $((expect_ns / 1000000)) ms)"
  done
  "$analyze" export --format folded --off-cpu "$d/$name.prec" >"$d/$name.folded" ||
    fail "$name: export --off-cpu failed"
  local us; us=$(awk '/napper_loop;napper_nap;/ { s += $NF } END { print s + 0 }' "$d/$name.folded")
  within "$((us * 1000))" "$expect_ns" 5 ||
    fail "$name: folded stacks hold $us us under napper_loop;napper_nap: $(cat "$d/$name.folded")"
  # (with another tracer on sched_switch, e.g. perf -e sched:sched_switch,
  # the kernel calls the probes through __traceiter_sched_switch: one frame
  # of tracing glue more than the program skips)
  grep -qE 'napper_nap;.*;schedule;__schedule(;__traceiter_sched_switch)? [0-9]+$' "$d/$name.folded" ||
    fail "$name: the kernel stack does not end in schedule;__schedule: $(cat "$d/$name.folded")
$("$analyze" info "$d/$name.prec" | grep -iE 'bpf|lost')"
  "$analyze" sched --csv "$d/$name.prec" >"$d/$name.sched.csv"
  grep -q '^napper,.*,sleeping,' "$d/$name.sched.csv" ||
    fail "$name: sched shows no sleeping time for napper"
}
nap btf
nap rawtp PERFREC_OFFCPU_RAW_TP=1
# every block an interval / every block summed: the same total
for t in 0 1s; do
  "$perfrec" record -q --off-cpu=$t -o "$d/t$t.prec" -- "$build/tests/napper" 50 4 >"$d/t$t.out"
  ns=$(awk '{ print $5 }' "$d/t$t.out")
  # under napper_nap: not the runnable waits of a busy host
  ms=$("$analyze" report --off-cpu --children --csv --sort sym "$d/t$t.prec" |
       csvrows /dev/stdin rows sym children_ms | awk -F'\t' '$1 == "napper_nap" { print $2 }')
  within "$(awk -v m="$ms" 'BEGIN { print m * 1e6 }')" "$ns" 5 ||
    fail "--off-cpu=$t: $ms ms off-CPU, napper slept $ns ns"
  echo "--off-cpu=$t: napper_nap $ms ms off-CPU"
done
"$analyze" info "$d/t1s.prec" >"$d/t1s.info"
grep -q '^offcpu_sums  *[1-9]' "$d/t1s.info" || fail "--off-cpu=1s wrote no sums"

# ---- 2. pingpong: BPF blocked time vs switch records
"$perfrec" record -q --off-cpu --switch-events -o "$d/pp.prec" -- "$build/tests/pingpong" 1000 0 0 1500 \
  >"$d/pp.out" || fail "pingpong record failed"
"$analyze" sched --csv "$d/pp.prec" >"$d/pp.csv"
for t in pp-ping pp-pong; do
  sw=$(csvrows "$d/pp.csv" tasks comm offcpu_ms | awk -F'\t' -v t=$t '$1 == t { s += $2 } END { print s + 0 }')
  bpf=$(csvrows "$d/pp.csv" states comm blocked_ms | awk -F'\t' -v t=$t '$1 == t { s += $2 } END { print s + 0 }')
  within "$bpf" "$sw" 5 || fail "$t: BPF says $bpf ms blocked, switch records $sw ms"
  echo "$t: blocked $bpf ms (BPF) vs $sw ms (switch records)"
done

# ---- 3. --filter
bash -c 'while :; do :; done' & a=$!; pids+=("$a")
bash -c 'while :; do :; done' & b=$!; pids+=("$b")
sleep 0.2
# Both recordings run at once: they sample the same second of the same
# load (one after the other, what the host's other tasks take moves).
# Each counts cpu-clock too: the CPU time its events were on.
"$perfrec" record -q -a -d 1 -e cpu-clock --counters '{cpu-clock}' --filter "pid=$a" \
  -o "$d/fa.prec" 2>"$d/fa.err" &
fa=$!; pids+=("$fa")
"$perfrec" record -q -a -d 1 -e cpu-clock --counters '{cpu-clock}' -o "$d/all.prec" ||
  fail "record failed"
wait "$fa" || fail "record --filter failed: $(cat "$d/fa.err")"
"$analyze" report --sort pid --csv "$d/fa.prec" | csvrows /dev/stdin rows pid samples >"$d/fa.rows"
[ "$(cut -f1 "$d/fa.rows" | sort -u)" = "$a" ] ||
  fail "--filter pid=$a kept samples of other tasks: $(cat "$d/fa.rows")"
filtered=$("$analyze" info --csv "$d/fa.prec" | csvrows /dev/stdin filtered event filtered | cut -f2)
"$analyze" report --sort pid --csv "$d/all.prec" | csvrows /dev/stdin rows pid samples >"$d/all.rows"
# Both CPUs are kept busy, so either run takes 4000 samples a second of
# each CPU whoever runs: kept + filtered per second of cpu-clock must be
# what the unfiltered run took per second. Per second of each run's own
# cpu-clock count, not per run: -d 1 can stop a step late on a loaded
# host (8790 samples in one run against 7861 in the other failed a count
# check). (How the samples split between A and the rest depends on where
# the recorders ran: not compared.)
kept=$(awk -F'\t' '{ s += $2 } END { print s + 0 }' "$d/fa.rows")
total=$(awk -F'\t' '{ s += $2 } END { print s + 0 }' "$d/all.rows")
per_s() {   # per_s COUNT FILE: COUNT per second of FILE's cpu-clock count
  "$analyze" counters --csv "$2" | awk -F, -v n="$1" '$2 == "cpu-clock" && $3 > 0 {
    printf "%.0f", n / ($3 / 1e9); f = 1 } END { if (!f) print 0 }'
}
rate_f=$(per_s "$((kept + filtered))" "$d/fa.prec")
rate_a=$(per_s "$total" "$d/all.prec")
within "$rate_f" "$rate_a" 10 ||
  fail "--filter pid=$a kept $kept and filtered $filtered samples ($rate_f/s); the unfiltered run took $total ($rate_a/s)"
echo "filter pid=$a: kept $kept, filtered $filtered ($rate_f/s); unfiltered $total ($rate_a/s)"

root=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
if [ -n "$root" ]; then
  cg="$root/perfrec-test-$$"
  mkdir "$cg"
  echo "$b" >"$cg/cgroup.procs"
  "$perfrec" record -q -a -d 1 --filter "cgroup=/perfrec-test-$$ && mode=user" -o "$d/fc.prec" ||
    fail "record --filter cgroup failed"
  got=$("$analyze" report --sort pid --csv "$d/fc.prec" | csvrows /dev/stdin rows pid samples | cut -f1 | sort -u)
  [ "$got" = "$b" ] || fail "--filter cgroup kept samples of pids '$got', expected $b"
  echo "filter cgroup=/perfrec-test-$$ && mode=user: only pid $b"
else
  echo "no cgroup v2 hierarchy mounted: cgroup filter not tested"
fi

if "$perfrec" record -q -a -d 1 --filter "pid=1 && mdoe=user" -o "$d/bad.prec" 2>"$d/bad.err"; then
  fail "a bad --filter was accepted"
fi
grep -q "unknown field 'mdoe'" "$d/bad.err" && grep -q '^ *\^\^\^\^$' "$d/bad.err" ||
  fail "the bad --filter message does not point at the field: $(cat "$d/bad.err")"
[ ! -e "$d/bad.prec" ] || fail "a bad --filter still wrote a file"
echo "PASS"
