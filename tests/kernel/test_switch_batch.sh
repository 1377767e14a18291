#!/usr/bin/env bash
# test_switch_batch.sh - context switches recorded as switch batches (format
# 1.2) analyze exactly as the same switches written one ContextSwitch
# packet each (the 1.1 encoding).
#
# pingpong (two threads passing a byte over pipes ROUNDS times: two
# switches per round each) recorded system-wide with --switch-events; the
# recorder writes batches. format_bench --transcode rewrites the same
# packets with BENCH_SWITCH_ROWS=0, one ContextSwitch packet per switch,
# frames cut where the recording's end: the same events in both encodings,
# so:
#  - sched (text, CSV with --hist) and dump (text, JSON) print the same
#    bytes on both files, and verify finds both whole;
#  - info counts the same context_switch packets on both, as many as the
#    recorder's SessionEnd says it wrote;
#  - each pingpong thread has at least ROUNDS / 2 switch-ins (the trace
#    holds the workload's switches, not an empty schedule);
#  - the batched file is smaller.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_switch_batch swbatch
kt_need_root
kt_need_perf

rounds=${ROUNDS:-20000}
pingpong=$build/tests/pingpong
bench=$build/tests/format_bench
[ -x "$pingpong" ] && [ -x "$bench" ] || fail "build pingpong and format_bench first"

mkdir -p "$d/b" "$d/p"
"$perfrec" record -q -a --switch-events -o "$d/b/t.prec" -- "$pingpong" "$rounds" 20 \
  >"$d/pp.out" || fail "record failed"
read -r ping pong < <(sed -n 's/.*ping tid \([0-9]*\), pong tid \([0-9]*\).*/\1 \2/p' "$d/pp.out") || true
[ -n "${ping:-}" ] && [ -n "${pong:-}" ] || fail "pingpong printed no tids: $(cat "$d/pp.out")"
BENCH_SWITCH_ROWS=0 "$bench" --transcode "$d/b/t.prec" "$d/p/t.prec" >"$d/tc.out" ||
  fail "transcode failed: $(cat "$d/tc.out")"
step "recorded $rounds rounds: $(stat -c %s "$d/b/t.prec") bytes batched, $(stat -c %s "$d/p/t.prec") a packet per switch"

for args in "sched t.prec" "sched t.prec --csv --hist" "dump t.prec" "dump t.prec --json" "verify t.prec"; do
  for e in b p; do
    (cd "$d/$e" && "$analyze" $args >"$d/$e.out" 2>"$d/$e.err") ||
      fail "$e: $args: $(cat "$d/$e.err")"
  done
  cmp -s "$d/b.out" "$d/p.out" ||
    fail "$args differs between the encodings: $(diff "$d/b.out" "$d/p.out" | head -10)"
done
grep -q "status *ok" "$d/b.out" || fail "verify: $(cat "$d/b.out")"

for e in b p; do
  "$analyze" info "$d/$e/t.prec" --json >"$d/$e.json" || fail "info $e"
done
count="sum(x['count'] for x in r['packets'] if x['kind'] == 'context_switch')"
nb=$(json "$d/b.json" "$count")
np=$(json "$d/p.json" "$count")
want=$(json "$d/b.json" "r['info']['switches']")
[ "$nb" = "$np" ] && [ "$nb" = "$want" ] ||
  fail "context switches: $nb batched, $np a packet each, $want written"
step "$nb context switches in both"

(cd "$d/b" && "$analyze" sched t.prec --csv) >"$d/sched.csv"
python3 - "$d/sched.csv" "$ping" "$pong" "$rounds" <<'EOF' || fail "pingpong's switches are missing"
import csv, sys
path, ping, pong, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
text = open(path).read()
tasks = text.split("# tasks\n", 1)[1].split("\n\n", 1)[0]
rows = {r["tid"]: r for r in csv.DictReader(tasks.splitlines())}
for t in (ping, pong):
    ins = int(rows[t]["switch_ins"]) if t in rows else 0
    print(f"tid {t}: {ins} switch-ins for {rounds} rounds")
    if ins < rounds // 2:
        sys.exit(1)
EOF
[ "$(stat -c %s "$d/b/t.prec")" -lt "$(stat -c %s "$d/p/t.prec")" ] ||
  fail "the batched file is not smaller"
step "ok"
