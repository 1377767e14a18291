#!/usr/bin/env bash
# test_ring_order.sh - the recorder handles a process's exec and mmaps
# before its samples, whichever CPU rings they sit in.
#
# The kernel writes a process's exec, comm and mmap records into the ring
# of the CPU it ran on then, and its samples into the ring of the CPU each
# ran on: a process that moves right after its exec has its first samples
# in another ring than its mappings. Read one ring after the other, those
# samples came before the mappings they fall in, so the recorder did not
# know which object they hit and never collected its symbols for them:
# the analyzer showed [esN]+0x... for the stages they hit.
#
# The workload: two shell loops exec'ing 120 copies of execspin (one
# binary each, at its own path, so each copy's symbols are collected only
# from its own samples), 20 ms of CPU in 32 stages, one function each, so
# a lost sample is a stage left unnamed; two busy loops keep both CPUs
# loaded, so the scheduler moves the copies. Recorded by `perfrec record
# -a -g` and `perf record -a -g` at once (the same events): perf names
# them from the binaries at report time, in time order.
# Checked: the samples of the copies whose stack holds an unnamed frame of
# their own binary, per mille, are at most perf's + 2 (perf's own are
# samples taken in the exec itself, before the new image is mapped).
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_ring_order ringorder
kt_need_root
[ -x "$perfrec" ] && [ -x "$analyze" ] || fail "build perfrec and perfrec-analyze first"
command -v perf >/dev/null || skip "no perf"
es=$build/tests/execspin
[ -x "$es" ] || fail "build the test workloads first ($es)"
kt_need_perf
kt_on_fail() { kt_tail_logs "$d/rec.out" "$d/perf.out"; }

copies=120
mkdir "$d/bin"
for i in $(seq 1 $copies); do cp "$es" "$d/bin/es$i"; done
cat >"$d/loop.sh" <<EOF
#!/bin/sh
i=\$1
while [ \$i -le $copies ]; do sh -c "$d/bin/es\$i 20"; i=\$((i + 2)); done
EOF
chmod +x "$d/loop.sh"
for k in 1 2; do
  sh -c 'while :; do :; done' &
  pids+=($!)
done

perf record -q -a -g -F 2000 -o "$d/perf.data" -- sleep 600 >"$d/perf.out" 2>&1 &
perf_pid=$!
pids+=($perf_pid)
sleep 1
"$perfrec" record -q -a -g -F 2000 -o "$d/t.prec" -- \
  sh -c "$d/loop.sh 1 & $d/loop.sh 2 & wait" >"$d/rec.out" 2>&1 || fail "record failed"
kill -INT $perf_pid
wait $perf_pid 2>/dev/null || true
step "recorded"

"$analyze" export --format folded "$d/t.prec" >"$d/t.folded" || fail "export failed"
read -r pt pu < <(awk '/^es[0-9]+;/ { c = $NF; t += c; if ($0 ~ /\[es[0-9]+\]\+0x/) u += c }
                       END { printf "%d %d\n", t, u }' "$d/t.folded")
perf script -i "$d/perf.data" -F comm,ip,sym,dso 2>/dev/null >"$d/perf.txt" ||
  fail "perf script failed"
read -r qt qu < <(awk -v bin="($d/bin/es" 'BEGIN { RS = "" }
    /^es[0-9]+/ { t++; if (index($0, "[unknown] " bin)) u++ }
    END { printf "%d %d\n", t, u }' "$d/perf.txt")
echo "samples of the copies: perfrec $pt ($pu with an unnamed frame of their binary)," \
     "perf $qt ($qu)"
[ "$pt" -ge $((copies * 20)) ] && [ "$qt" -ge $((copies * 20)) ] ||
  fail "too few samples of the copies: perfrec $pt, perf $qt"
pm=$((pu * 1000 / pt))
qm=$((qu * 1000 / qt))
echo "per mille: perfrec $pm, perf $qm"
[ "$pm" -le $((qm + 2)) ] ||
  fail "$pm per mille of the copies' samples unnamed in their own binary (perf: $qm)"
echo "PASS"
