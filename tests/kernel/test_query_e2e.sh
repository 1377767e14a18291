#!/usr/bin/env bash
# test_query_e2e.sh - perfrec-analyze query over real recordings says what the
# reports say about the same events:
#   - two hosts recorded at once (this host rotated every second, host qb
#     streamed to a collector, in one file) while pingpong switches and splitspin spins:
#     `SELECT count(*), sum(period), sym FROM samples GROUP BY sym` equals
#     `report -s sym` for one file and for the dataset of both hosts
#     (and by host, comm, pid);
#   - sched's per-thread switch-ins equal the switches rows that switch
#     the thread in, and its on-CPU time the intervals between them
#     (within the microsecond between a switch's out and in records);
#   - counters' final raw values equal the counters rows' last values per
#     instance (one task's group, and a group on every CPU, whose
#     instances are read one after the other), the rows naming the task
#     or the CPU read;
#   - a window of a tenth of qb's recording decodes about a tenth of the
#     frames a full scan does (--stats), and finds what the full scan with
#     the same condition finds;
#   - --db writes the tables with as many rows as the queries count.
set -euo pipefail
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_query_e2e query
kt_need_perf
pingpong=$build/tests/pingpong
splitspin=$build/tests/splitspin
q() { "$analyze" query "$@" --no-progress; }

mkdir -p "$d/ds/qa" "$d/ds/qb"
# Host qb streams to a collector (--host names it there), this host
# records into rotated files: two hosts, recorded at once.
port=$(free_ports 1)
echo "tok-$$" > "$d/token"
chmod 600 "$d/token"
"$perfrec" collect --listen "127.0.0.1:$port" --dir "$d/ds/qb" --token-file "$d/token" \
  2>>"$d/coll.log" &
pids+=("$!")
for _ in $(seq 100); do grep -q "listening on" "$d/coll.log" 2>/dev/null && break; sleep 0.05; done
grep -q "listening on" "$d/coll.log" || fail "collector did not start: $(cat "$d/coll.log")"
# while both record: ~2.4 s of switches (200 us a side per round), and
# 2 CPU seconds split 30/70 between two functions, both inside the
# recordings
"$perfrec" record -a -e cpu-clock -F 499 -g --switch-events --rotate-time 1s \
  -d 4 -q -o "$d/ds/qa/a.prec" 2> "$d/qa.log" &
ra=$!
"$perfrec" record -a -e cpu-clock -F 499 -g --switch-events --flush-ms 100 -d 4 -q \
  --to "127.0.0.1:$port" --token-file "$d/token" --host qb --session s1 \
  --finish-timeout 30s 2> "$d/qb.log" &
rb=$!
sleep 0.7
"$pingpong" 6000 100 0 200 > "$d/pingpong.out" &
wp=$!
"$splitspin" 30 2 > /dev/null || fail "splitspin"
wait "$wp" || fail "pingpong"
wait "$rb" || fail "record qb: $(cat "$d/qb.log")"
wait "$ra" || fail "record qa: $(cat "$d/qa.log")"
na=$(ls "$d"/ds/qa/*.prec | wc -l)
[ "$na" -ge 3 ] || fail "expected about 4 rotated files of this host, got $na"
b=$d/ds/qb/qb/s1.prec
[ -f "$b" ] || fail "no archive file: $(ls -R "$d/ds/qb")"
step "recorded: this host in $na files, qb in one"

# The rows of a CSV section (report) or of the whole output (query), the
# listed fields of each, as a sorted list.
cat > "$d/rows.py" <<'EOF'
import csv, sys
def rows(path, section, fields):
    out, on = [], section is None
    lines = open(path).read().split("\n")
    head = True
    for line in lines:
        if section is not None and line.startswith("# "):
            on, head = line == "# " + section, True
            continue
        if not on or not line:
            if on and section is None and not head:
                break
            continue
        if head:
            head = False
            continue
        r = next(csv.reader([line]))
        out.append(tuple(r[i] for i in fields))
    return sorted(out)
EOF
same() {   # REPORT_CSV SECTION FIELDS QUERY_CSV WHAT
  python3 - "$@" <<'EOF' || fail "$5: report and query differ"
import sys
sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0])
from rows import rows
fields = [int(x) for x in sys.argv[3].split(",")]
a = rows(sys.argv[1], sys.argv[2], fields)
b = rows(sys.argv[4], None, list(range(len(fields))))
if a != b:
    sa, sb = set(a), set(b)
    print(f"only in report: {sorted(sa - sb)[:10]}\nonly in query: {sorted(sb - sa)[:10]}")
    sys.exit(1)
print(f"test_query_e2e: {sys.argv[5]}: {len(a)} rows equal")
EOF
}

# --- samples: report -s sym and -s host,comm,pid vs GROUP BY
for in in "$b" "$d/ds"; do
  "$analyze" report "$in" -s sym --csv --no-progress > "$d/r.csv" || fail "report $in"
  q 'SELECT count(*), sum(period), sym FROM samples GROUP BY sym' "$in" --csv > "$d/q.csv" \
    || fail "query $in"
  same "$d/r.csv" rows 1,2,3 "$d/q.csv" "sym over $(basename "$in")"
  "$analyze" report "$in" -s host,comm,pid --csv --no-progress > "$d/r.csv" || fail "report $in"
  q 'SELECT count(*), sum(period), host, comm, pid FROM samples GROUP BY host, comm, pid' \
    "$in" --csv > "$d/q.csv" || fail "query $in"
  same "$d/r.csv" rows 1,2,3,4,5 "$d/q.csv" "host,comm,pid over $(basename "$in")"
done
# splitspin's two functions hold its samples 30/70
q "SELECT sym, count(*) FROM samples WHERE comm = 'splitspin' AND sym IN ('split_a', 'split_b') \
   GROUP BY sym ORDER BY sym" "$b" --csv > "$d/split.csv"
python3 - "$d/split.csv" <<'EOF' || fail "splitspin's split: $(cat "$d/split.csv")"
import csv, sys
r = {x[0]: int(x[1]) for x in list(csv.reader(open(sys.argv[1])))[1:]}
a, b = r.get("split_a", 0), r.get("split_b", 0)
assert a + b > 100, r
share = a / (a + b)
print(f"test_query_e2e: splitspin split_a {a}, split_b {b}: {100 * share:.1f}% (30% of its work)")
assert abs(share - 0.30) < 0.08, share
EOF

# --- switches vs sched, per thread of pingpong
tids=$(sed -n 's/.*ping tid \([0-9]*\), pong tid \([0-9]*\).*/\1 \2/p' "$d/pingpong.out")
[ -n "$tids" ] || fail "pingpong printed no thread ids: $(cat "$d/pingpong.out")"
"$analyze" sched "$b" --csv --no-progress > "$d/sched.csv" || fail "sched"
oncpu="WITH w AS (SELECT *, lead(time_ns) OVER (PARTITION BY host, cpu ORDER BY time_ns) AS nxt,
  row_number() OVER (PARTITION BY host, cpu ORDER BY time_ns) AS rn,
  (SELECT max(end_ns) FROM files f WHERE f.host = switches.host) AS last FROM switches),
 iv AS (SELECT host, next_tid AS tid, coalesce(nxt, last) - time_ns AS d, 1 AS ins FROM w
  UNION ALL SELECT host, prev_tid, time_ns - (SELECT min(start_ns) FROM files f WHERE f.host = w.host), 0
  FROM w WHERE rn = 1)
 SELECT tid, sum(d) / 1e6, sum(ins) FROM iv WHERE tid != 0 GROUP BY host, tid"
q "$oncpu" "$b" --csv > "$d/oncpu.csv" || fail "on-CPU query"
# records the rings lost are missing from both, but a lost switch-out
# record loses a row while its switch-in still counts in sched
lost=$(q 'SELECT coalesce(sum(count), 0) FROM losses' "$b" --csv | tail -1)
python3 - "$d/sched.csv" "$d/oncpu.csv" "$tids" "$lost" <<'EOF' || fail "sched and switches differ"
import sys
sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0])
from rows import rows
sched = {int(r[0]): (float(r[1]), int(r[2])) for r in rows(sys.argv[1], "tasks", [2, 3, 5])}
query = {int(r[0]): (float(r[1]), int(r[2])) for r in rows(sys.argv[2], None, [0, 1, 2])}
tids = [int(t) for t in sys.argv[3].split() if int(t) in sched]
assert tids, (sys.argv[3], sorted(sched)[:20])
for t in tids:
    (ms, ins), (qms, qins) = sched[t], query[t]
    # sched counts from the switch-in record, a row from the switch-out
    # record a microsecond before it
    tol = 1.0 + 0.003 * ins
    print(f"test_query_e2e: tid {t}: sched {ms:.3f} ms on CPU, {ins} switch-ins; "
          f"switches {qms:.3f} ms, {qins} rows ({sys.argv[4]} records lost)")
    assert abs(ins - qins) <= int(sys.argv[4]), (t, ins, qins, "lost", sys.argv[4])
    assert abs(ms - qms) <= tol, (t, ms, qms, tol)
EOF

# --- counters: one task's group, and a group on every CPU: final values
# are each instance's (cpu, pid) last read, summed
final="WITH last AS MATERIALIZED (SELECT host, event, cpu, pid, max(time_ns) AS t FROM counters
   GROUP BY host, event, cpu, pid) SELECT c.event, sum(c.value), sum(c.scaled) FROM counters c
   JOIN last l ON c.host = l.host AND c.event = l.event AND c.cpu = l.cpu AND c.pid = l.pid
   AND c.time_ns = l.t GROUP BY c.event"
"$perfrec" record -e cpu-clock --counters '{task-clock,context-switches}' -I 100ms -q \
  -o "$d/c.prec" -- "$pingpong" 3000 50 0 0 > /dev/null 2> "$d/c.log" || fail "record counters: $(cat "$d/c.log")"
"$analyze" counters "$d/c.prec" --csv --no-progress > "$d/c.csv" || fail "counters"
q "$final" "$d/c.prec" --csv > "$d/cq.csv" || fail "counters query"
same "$d/c.csv" counters 1,2,3 "$d/cq.csv" "counters' final values"
# the instance is the workload's process, counted on any CPU
inst=$(q "SELECT count(DISTINCT pid), min(cpu), max(cpu), sum(pid IN (SELECT pid FROM samples))
   = count(*) FROM counters" "$d/c.prec" --csv | tail -1)
[ "$inst" = "1,-1,-1,1" ] || fail "counters of one task: instances (pids, min cpu, max cpu, pid sampled) $inst"
"$perfrec" record -a -e cpu-clock -F 99 --counters '{task-clock,context-switches}' -I 100ms -q \
  -d 1 -o "$d/ca.prec" 2> "$d/ca.log" || fail "record counters -a: $(cat "$d/ca.log")"
"$analyze" counters "$d/ca.prec" --csv --no-progress > "$d/ca.csv" || fail "counters -a"
q "$final" "$d/ca.prec" --csv > "$d/caq.csv" || fail "counters -a query"
same "$d/ca.csv" counters 1,2,3 "$d/caq.csv" "counters' final values on every CPU"
inst=$(q "SELECT count(DISTINCT cpu), min(pid), max(pid) FROM counters" "$d/ca.prec" --csv | tail -1)
[ "$inst" = "$(getconf _NPROCESSORS_ONLN),-1,-1" ] || fail "counters on every CPU: instances (cpus, min pid, max pid) $inst, $(getconf _NPROCESSORS_ONLN) CPUs"

# --- a window of a tenth of qb: its frames only
read -r lo hi <<<"$(q 'SELECT min(time_ns), max(time_ns) FROM samples' "$b" --csv | tail -1 | tr , ' ')"
wlo=$((lo + (hi - lo) * 45 / 100)); whi=$((lo + (hi - lo) * 55 / 100))
frames() { sed -n 's/.*frames_read=\([0-9]*\).*/\1/p' "$1"; }
q 'SELECT count(*), sum(period) FROM samples' "$b" --csv --stats > "$d/full.csv" 2> "$d/full.err"
q "SELECT count(*), sum(period) FROM samples WHERE time_ns BETWEEN $wlo AND $whi" "$b" --csv \
  --stats > "$d/win.csv" 2> "$d/win.err"
q "SELECT count(*), sum(period) FROM samples WHERE time_ns + 0 BETWEEN $wlo AND $whi" "$b" --csv \
  --stats > "$d/scan.csv" 2> "$d/scan.err"
cmp -s "$d/win.csv" "$d/scan.csv" || fail "window $(cat "$d/win.csv") vs scan $(cat "$d/scan.csv")"
fa=$(frames "$d/full.err"); fw=$(frames "$d/win.err"); fs=$(frames "$d/scan.err")
echo "test_query_e2e: window of a tenth: $fw of $fa frames decoded ($(tail -1 "$d/win.csv") of $(tail -1 "$d/full.csv") samples)"
[ "$fs" = "$fa" ] || fail "the hidden condition read $fs frames, not all $fa"
# --flush-ms 100 cuts ~40 frames of samples; a recorder slowed down (a
# loaded machine, a sanitizer build) cuts fewer: a tenth then reads at
# most its edge frames (test_query's unit test has exact layouts)
[ "$fa" -ge 5 ] || fail "qb's samples in only $fa frames"
[ $((fw * 100)) -le $((fa * 15 + 400)) ] || fail "a tenth read $fw of $fa frames"

# --- --db: the same rows in a file
q --db "$d/out.sqlite" "$d/ds" || fail "--db"
for t in samples stacks switches tasks losses files profile; do
  n=$(q "SELECT count(*) FROM $t" "$d/ds" --csv | tail -1)
  m=$(python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM $t').fetchone()[0])" "$d/out.sqlite")
  [ "$n" = "$m" ] || fail "--db $t: $m rows, the query counts $n"
done
step "--db: every table's rows in out.sqlite"
echo "test_query_e2e: PASS"
