#!/usr/bin/env bash
# test_clickhouse.sh - `perfrec-analyze load --clickhouse` into two
# clickhouse-server shards behind Distributed tables (tests/lib/clickhouse.sh):
#   - a 3-host archive (three recordings made at once, each recorder in its
#     own UTS namespace under its own host name, one rotated into several
#     files) loaded; the hosts' rows are on both shards;
#     the same questions asked of ClickHouse and of `perfrec-analyze query`
#     over the .prec files give the same rows (profile per host and comm,
#     top leaf functions, tasks, counters, off-CPU sums, files);
#   - loaded twice: stored once (the second time with the URLs in
#     PERFREC_CLICKHOUSE, then in a --clickhouse-file, one a line; a file
#     others may read is refused, naming chmod 600);
#   - a load that fails half-way (a table missing on the shard, ClickHouse's
#     error naming the URL) and a load killed with SIGKILL at a random
#     point: run again, every row stored once;
#   - files without their end: a recorder killed with SIGKILL (no
#     SessionEnd) and a copy cut inside a frame (torn tail) are loaded,
#     warned by name, with whole = 0 and the samples `query` reads from
#     them; the torn copy's load is replaced by the whole file's, and
#     loaded again after it, is skipped: the recording is stored once;
#   - symbol and command names with quotes, tabs, newlines and NULs stored
#     byte for byte, and no statement made of them;
#   - an unreachable server: an error naming the URL.
# CI installs clickhouse-server (tests/install-deps.sh): there it never skips.
set -euo pipefail
. "$(dirname "$0")/../lib/kerntest.sh"
. "$(dirname "$0")/../lib/clickhouse.sh"
kt_begin test_clickhouse clickhouse
kt_on_exit() { ch_cluster_stop; }
kt_on_fail() { kt_tail_logs "$d"/*.log "$d"/ch/ch*/server.err.log; }

if ! ch_server_bin >/dev/null || ! command -v clickhouse-client >/dev/null; then
	skip "clickhouse-server not installed (tests/install-deps.sh installs it)"
fi
kt_need_perf
ch_cluster_start "$d/ch" || fail "clickhouse servers did not start"
urls="$CH_URL1,$CH_URL2"
ch() { ch_query 1 "$1"; }

# --- three hosts recorded at once: each recorder in its own UTS namespace
# with its own host name (the files' headers name it, as three machines'
# would), the same system's events
command -v unshare >/dev/null || skip "no unshare (util-linux)"
"$build/tests/pingpong" 100000000 6 0 200 >/dev/null &
pids+=("$!")
# host names whose cityHash64 put them on both shards (checked below)
hosts="alpha beta gamma"
# (gamma's recording rotates every second: a session of several files)
rec=()
for h in $hosts; do
	mkdir -p "$d/arch/$h"
	rot=()
	[ "$h" = gamma ] && rot=(--rotate-time 1)
	unshare --uts sh -c 'hostname "$1" && shift && exec "$@"' sh "$h" \
		"$perfrec" record -a -g -e cpu-clock -F 499 -d 3 -q -o "$d/arch/$h/s1.prec" "${rot[@]}" \
		--counters '{task-clock,page-faults}' -I 200ms --off-cpu \
		2>"$d/rec-$h.log" &
	rec+=("$!")
done
for i in "${!rec[@]}"; do wait "${rec[$i]}" || fail "recording $i failed: $(cat "$d"/rec-*.log)"; done
for h in $hosts; do
	f=$(ls "$d/arch/$h"/*.prec | head -1)
	"$analyze" info --json "$f" >"$d/info-$h.json" || fail "info $h"
	[ "$(json "$d/info-$h.json" "r['info']['hostname']")" = "$h" ] ||
		fail "$h's file names host $(json "$d/info-$h.json" "r['info']['hostname']")"
done
nrot=$(ls "$d"/arch/gamma/*.prec | wc -l)
[ "$nrot" -ge 2 ] || fail "gamma's recording did not rotate: $(ls "$d/arch/gamma")"
nfiles=$((nrot + 2))

# --- the archive loaded: each file through a database of its own
"$analyze" load --clickhouse "$urls" "$d/arch" 2>"$d/load1.log" || fail "load: $(cat "$d/load1.log")"
grep -q "$nfiles loaded, 0 already loaded" "$d/load1.log" || fail "first load: $(cat "$d/load1.log")"
s1=$(ch_query 1 "SELECT count() FROM profile_local")
s2=$(ch_query 2 "SELECT count() FROM profile_local")
[ "$s1" -gt 0 ] && [ "$s2" -gt 0 ] || fail "profile rows not on both shards: $s1 and $s2"
echo "test_clickhouse: 3 hosts loaded: profile rows $s1 on shard 1, $s2 on shard 2"

# --- the same questions of ClickHouse and of query over the files: both
# answer in CSV, read back by Python's csv module (so quoting and escapes
# do not differ), NULL ('' from query, \N from ClickHouse) as '', rows
# sorted and compared as text.
rows() {   # CSV [skip-header]: one tab-joined line per row, sorted
	python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))[int(sys.argv[2]):]
for r in sorted(["" if v == "\\N" else v for v in r] for r in rows):
    print("\t".join(r).encode("unicode_escape").decode())' "$1" "$2"
}
same() {   # NAME SQLITE_SQL CLICKHOUSE_SQL
	"$analyze" query --csv "$2" "$d/arch" >"$d/q-$1.csv" 2>"$d/q-$1.err" ||
		fail "query $1: $(cat "$d/q-$1.err")"
	ch "$3 FORMAT CSV" >"$d/ch-$1.csv" || fail "clickhouse $1"
	rows "$d/q-$1.csv" 1 >"$d/lite-$1.rows"
	rows "$d/ch-$1.csv" 0 >"$d/ch-$1.rows"
	if ! cmp -s "$d/lite-$1.rows" "$d/ch-$1.rows"; then
		diff "$d/lite-$1.rows" "$d/ch-$1.rows" >"$d/diff-$1" || true
		head -20 "$d/diff-$1" >&2
		fail "$1: query over the files and ClickHouse differ"
	fi
	[ -s "$d/ch-$1.rows" ] || fail "$1: no rows: the recordings hold nothing to compare"
	echo "test_clickhouse: $1: $(wc -l <"$d/ch-$1.rows") rows equal"
}
q="SELECT host, comm, sum(samples), sum(period) FROM profile GROUP BY host, comm"
same profile "$q" "$q"
# (a minute two rotated files share is a row of each in ClickHouse)
q="SELECT host, minute, count(DISTINCT stack_id), sum(samples) FROM profile GROUP BY host, minute"
same minutes "$q" "$q"
same leaf \
	"SELECT p.host, s.sym, s.dso, sum(p.samples) FROM profile p JOIN stacks s ON s.stack_id = p.stack_id AND s.depth = 0 GROUP BY p.host, s.sym, s.dso" \
	"SELECT host, sym, dso, sum(samples) FROM profile GLOBAL ANY INNER JOIN (SELECT stack_id, sym, dso FROM stacks WHERE depth = 0) USING stack_id GROUP BY host, sym, dso"
q="SELECT stack_id, depth, sym, dso, addr FROM stacks"
same stacks "SELECT DISTINCT stack_id, depth, sym, dso, addr FROM stacks" "$q FINAL"
q="SELECT host, pid, tid, comm, start_ns, end_ns FROM tasks"
same tasks "$q" "$q"
q="SELECT host, event, count(*), sum(value) FROM counters GROUP BY host, event"
same counters "$q" "$q"
# (-a: one instance per CPU, read one after the other)
q="SELECT host, event, cpu, pid, count(*), max(time_ns), max(value) FROM counters GROUP BY host, event, cpu, pid"
same counter-instances "$q" "$q"
same offcpu \
	"SELECT host, comm, state, sum(count), sum(end_ns - start_ns) FROM offcpu GROUP BY host, comm, state" \
	"SELECT host, comm, state, sum(blocks), sum(off_ns) FROM offcpu_profile GROUP BY host, comm, state"
# (blocks are not rows: -a meets blocks shorter than the threshold, summed)
nsum=$("$analyze" query --csv 'SELECT count(*) FROM offcpu WHERE count > 1' "$d/arch" | tail -1)
[ "$nsum" -gt 0 ] || fail "offcpu: no kernel sums in the recordings: blocks equal rows, nothing compared"
q="SELECT host, session, start_ns, end_ns, bytes, samples, whole FROM files"
same files "$q" "$q"

# --- loaded twice: stored once, whether the second time is the archive
# again or databases `query --db` wrote of its files (the same file keys)
counts() { for t in profile stacks offcpu_profile counters tasks files; do echo "$t $(ch "SELECT count() FROM $t")"; done; }
counts >"$d/counts1"
PERFREC_CLICKHOUSE="$urls" "$analyze" load "$d/arch" 2>"$d/load2.log" ||
	fail "second load: $(cat "$d/load2.log")"
grep -q "0 loaded, $nfiles already loaded" "$d/load2.log" || fail "second load: $(cat "$d/load2.log")"
dbs=()
for f in "$d"/arch/*/*.prec; do
	db=$d/db-$(basename "$(dirname "$f")")-$(basename "$f" .prec).sqlite
	"$analyze" query --db "$db" "$f" 2>"$d/db.log" || fail "query --db $f: $(cat "$d/db.log")"
	dbs+=("$db")
done
printf '%s\n%s\n' "$CH_URL1" "$CH_URL2" >"$d/urls"
chmod 644 "$d/urls"
if "$analyze" load --clickhouse-file "$d/urls" "${dbs[@]}" 2>"$d/load3.log"; then
	fail "a --clickhouse-file others may read was used"
fi
grep -q "clickhouse-file $d/urls is open to others than its owner (mode 644) and may hold passwords: chmod 600 $d/urls" \
	"$d/load3.log" || fail "mode 644 refusal: $(cat "$d/load3.log")"
chmod 600 "$d/urls"
"$analyze" load --clickhouse-file "$d/urls" "${dbs[@]}" 2>"$d/load3.log" ||
	fail "load of the databases: $(cat "$d/load3.log")"
grep -q "0 loaded, $nfiles already loaded" "$d/load3.log" ||
	fail "databases of loaded files: $(cat "$d/load3.log")"
counts >"$d/counts2"
cmp -s "$d/counts1" "$d/counts2" || fail "a second load changed the tables: $(diff "$d/counts1" "$d/counts2")"
echo "test_clickhouse: loaded twice (archive, then query --db databases), stored once"

# --- files without their end: what they hold is loaded, marked whole = 0
ckpath() {   # PATH: the samples ClickHouse holds of the file at PATH
	ch "SELECT sum(samples) FROM profile WHERE file_key GLOBAL IN (SELECT file_key FROM files WHERE path = '$1')"
}
qsamples() { "$analyze" query --csv 'SELECT count(*) FROM samples' "$1" 2>/dev/null | tail -1; }
mkdir -p "$d/crash" "$d/torn" "$d/full"
"$perfrec" record -a -g -e cpu-clock -F 499 -d 20 -q -o "$d/crash/c.prec" 2>"$d/rec-crash.log" &
cpid=$!
"$perfrec" record -a -g -e cpu-clock -F 499 -d 2 -q -o "$d/full/f.prec" 2>"$d/rec-full.log" ||
	fail "recording f.prec: $(cat "$d/rec-full.log")"
kill -9 "$cpid"
wait "$cpid" 2>/dev/null || true
head -c $(($(stat -c %s "$d/full/f.prec") * 2 / 3)) "$d/full/f.prec" >"$d/torn/f.prec"
for f in crash/c torn/f; do
	"$analyze" load --clickhouse "$urls" "$d/$f.prec" 2>"$d/load-cut.log" ||
		fail "load of $f.prec: $(cat "$d/load-cut.log")"
	grep -q "warning: $d/$f.prec: .* whole frames are loaded, as a file with whole = 0" "$d/load-cut.log" ||
		fail "no warning naming $f.prec: $(cat "$d/load-cut.log")"
	grep -q "1 loaded, 0 already loaded, 0 still being written, 1 loaded without their end" "$d/load-cut.log" ||
		fail "$f.prec: $(cat "$d/load-cut.log")"
	[ "$(ch "SELECT whole FROM files WHERE path = '$d/$f.prec'")" = 0 ] ||
		fail "$f.prec: files row $(ch "SELECT whole FROM files WHERE path = '$d/$f.prec'")"
	n=$(qsamples "$d/$f.prec")
	[ "$n" -gt 0 ] && [ "$(ckpath "$d/$f.prec")" = "$n" ] ||
		fail "$f.prec: $(ckpath "$d/$f.prec") samples loaded, query reads $n"
	echo "test_clickhouse: $f.prec without its end: $n samples loaded, whole = 0"
done
grep -q "no SessionEnd" "$d/load-cut.log" && fail "the torn copy said no SessionEnd"
"$analyze" load --clickhouse "$urls" "$d/full/f.prec" 2>"$d/load-full.log" ||
	fail "load of the whole file: $(cat "$d/load-full.log")"
grep -q "$d/full/f.prec: replaces 1 earlier load of a shorter copy of its recording" "$d/load-full.log" ||
	fail "the whole file did not replace its torn copy: $(cat "$d/load-full.log")"
"$analyze" load --clickhouse "$urls" "$d/torn/f.prec" 2>"$d/load-torn2.log" ||
	fail "second load of the torn copy: $(cat "$d/load-torn2.log")"
grep -q "already loaded whole, from a complete copy" "$d/load-torn2.log" ||
	fail "the torn copy loaded again over its whole file: $(cat "$d/load-torn2.log")"
[ "$(ch "SELECT count() FROM files WHERE path LIKE '$d/%/f.prec'")" = 1 ] ||
	fail "files of f.prec's recording: $(ch "SELECT path, whole FROM files WHERE path LIKE '$d/%/f.prec'")"
[ "$(ch "SELECT count() FROM profile WHERE file_key GLOBAL NOT IN (SELECT file_key FROM files)")" = 0 ] ||
	fail "rows of the torn copy's load left: $(ch "SELECT count() FROM profile WHERE file_key GLOBAL NOT IN (SELECT file_key FROM files)")"
[ "$(ckpath "$d/full/f.prec")" = "$(qsamples "$d/full/f.prec")" ] ||
	fail "f.prec: $(ckpath "$d/full/f.prec") samples loaded, query reads $(qsamples "$d/full/f.prec")"
echo "test_clickhouse: the torn copy's load replaced by the whole file's, then skipped"

# --- made-up databases: hostile names, and one large enough to be killed
# while it loads (python's sqlite3 writes the tables of docs/query.md)
python3 - "$d" <<'EOF'
import sqlite3, sys
d = sys.argv[1]
SCHEMA = """
CREATE TABLE samples(host TEXT, session TEXT, time_ns INTEGER, cpu INTEGER, pid INTEGER,
  tid INTEGER, comm TEXT, event TEXT, period INTEGER, sym TEXT, dso TEXT, stack_id INTEGER);
CREATE TABLE stacks(stack_id INTEGER, depth INTEGER, sym TEXT, dso TEXT, addr INTEGER);
CREATE TABLE offcpu(host TEXT, start_ns INTEGER, end_ns INTEGER, pid INTEGER, tid INTEGER,
  comm TEXT, state TEXT, stack_id INTEGER, count INTEGER);
CREATE TABLE counters(host TEXT, time_ns INTEGER, cpu INTEGER, pid INTEGER, event TEXT,
  group_leader TEXT, value INTEGER, enabled_ns INTEGER, running_ns INTEGER, scaled REAL);
CREATE TABLE tasks(host TEXT, pid INTEGER, tid INTEGER, comm TEXT, start_ns INTEGER, end_ns INTEGER);
CREATE TABLE files(host TEXT, session TEXT, path TEXT, start_ns INTEGER, end_ns INTEGER,
  bytes INTEGER, samples INTEGER, whole INTEGER);
CREATE TABLE profile(host TEXT, minute INTEGER, comm TEXT, pid INTEGER, stack_id INTEGER,
  samples INTEGER, period INTEGER);
"""
T0 = 1764115200 * 10**9   # 2025-11-26 00:00 UTC
def make(path, host, nprof, nstacks, names):
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO stacks VALUES (?,?,?,?,?)",
                   ((7000 + s, k, names[(s + k) % len(names)], "/usr/lib/libx.so", 0x1000 + k)
                    for s in range(nstacks) for k in range(3)))
    db.executemany("INSERT INTO profile VALUES (?,?,?,?,?,?,?)",
                   ((host, T0 + (i // nstacks) * 60 * 10**9, names[i % len(names)], 1000 + i % 5,
                     7000 + i % nstacks, 1 + i % 3, 1000 * (1 + i % 3)) for i in range(nprof)))
    db.executemany("INSERT INTO offcpu VALUES (?,?,?,?,?,?,?,?,?)",
                   ((host, T0 + i * 10**6, T0 + i * 10**6 + 5000, 1000, 1000 + i % 4,
                     names[i % len(names)], "S", 7000, 1 + i % 2) for i in range(100)))
    db.execute("INSERT INTO tasks VALUES (?,?,?,?,?,?)", (host, 1000, 1000, names[0], T0, T0 + 10**9))
    db.execute("INSERT INTO counters VALUES (?,?,?,?,?,?,?,?,?,?)",
               (host, T0, 0, -1, names[1], names[1], 5, 10, 5, 10.0))
    db.execute("INSERT INTO files VALUES (?,?,?,?,?,?,?,?)",
               (host, "made", f"/archive/{host}.prec", T0, T0 + 3600 * 10**9, 4096 + nprof,
                sum(1 + i % 3 for i in range(nprof)), 1))
    db.commit()
hostile = ["quote'); DROP TABLE files; --", "tab\there", "new\nline", "nul\0inside",
           'back\\slash"dq', "plain"]
make(f"{d}/hostile.sqlite", "evil'host\t\n", 60, 6, hostile)
make(f"{d}/big.sqlite", "delta", 400000, 5000, [f"fn{i}" for i in range(50)])
make(f"{d}/half.sqlite", "epsilon", 3000, 40, [f"gn{i}" for i in range(20)])
make(f"{d}/old.sqlite", "zeta", 30, 3, [f"hn{i}" for i in range(5)])
with open(f"{d}/hostile.hex", "w") as f:
    for s in sorted(hostile):
        f.write(s.encode().hex().upper() + "\n")
EOF
[ -f "$d/hostile.hex" ] || fail "could not make the test databases"

# hostile names: stored byte for byte, the tables all still there
"$analyze" load --clickhouse "$urls" "$d/hostile.sqlite" 2>"$d/load-h.log" ||
	fail "hostile load: $(cat "$d/load-h.log")"
ch "SELECT DISTINCT hex(sym) FROM stacks WHERE stack_id >= 7000 AND stack_id < 7006 ORDER BY sym" \
	>"$d/hostile.got"
python3 -c 'import sys; print("\n".join(sorted(open(sys.argv[1]).read().split())))' "$d/hostile.hex" \
	>"$d/hostile.want"
python3 -c 'import sys; print("\n".join(sorted(open(sys.argv[1]).read().split())))' "$d/hostile.got" \
	>"$d/hostile.got.sorted"
cmp -s "$d/hostile.want" "$d/hostile.got.sorted" ||
	fail "hostile names changed: $(diff "$d/hostile.want" "$d/hostile.got.sorted")"
[ "$(ch "SELECT hex(host) FROM files WHERE session = 'made'")" = "6576696C27686F7374090A" ] ||
	fail "hostile host name changed: $(ch "SELECT hex(host) FROM files WHERE session = 'made'")"
[ "$(ch "SELECT count() FROM system.tables WHERE database = currentDatabase()")" = 12 ] ||
	fail "tables changed by hostile names: $(ch "SHOW TABLES")"
echo "test_clickhouse: hostile names stored byte for byte"

# expected rows of a made-up database per table
want() {   # DB HOST
	local prof stacks
	prof=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM profile").fetchone()[0])' "$1")
	echo "profile $prof"
	echo "offcpu_profile $(ch "SELECT count() FROM offcpu_profile WHERE host = '$2'")"
	echo "files $(ch "SELECT count() FROM files WHERE host = '$2'")"
}
stored() {   # HOST: rows per table of HOST's file
	echo "profile $(ch "SELECT count() FROM profile WHERE host = '$1'")"
	echo "offcpu_profile $(ch "SELECT count() FROM offcpu_profile WHERE host = '$1'")"
	echo "files $(ch "SELECT count() FROM files WHERE host = '$1'")"
}

# --- a load that fails half-way: the first server's tasks table is one of
# another shape (CREATE TABLE IF NOT EXISTS keeps it), so profile,
# offcpu_profile and counters are stored, tasks fails with ClickHouse's
# message, and no files row (the marker) is written
ch "RENAME TABLE tasks TO tasks_saved"
ch "CREATE TABLE tasks (x Int64) ENGINE = Memory"
if "$analyze" load --clickhouse "$CH_URL1" "$d/half.sqlite" 2>"$d/load-half.log"; then
	fail "a load into a cluster with a broken tasks table succeeded"
fi
grep -q "ClickHouse at $CH_URL1: error [0-9]*: .*file_key" "$d/load-half.log" ||
	fail "the failure does not name the URL and ClickHouse's message: $(cat "$d/load-half.log")"
[ "$(ch "SELECT count() FROM profile WHERE host = 'epsilon'")" = 3000 ] ||
	fail "the failed load stored no profile rows: the test did not interrupt half-way"
[ "$(ch "SELECT count() FROM files WHERE host = 'epsilon'")" = 0 ] || fail "a marker for a failed load"
ch "DROP TABLE tasks"
ch "RENAME TABLE tasks_saved TO tasks"
# a partial table on top: half of profile's rows gone, as if an insert had
# been cut (the loader must delete the rest and insert all of them)
ch_query 1 "ALTER TABLE profile_local DELETE WHERE host = 'epsilon' AND stack_id % 2 = 0"
ch_query 2 "ALTER TABLE profile_local DELETE WHERE host = 'epsilon' AND stack_id % 2 = 0"
for _ in $(seq 100); do
	[ "$(ch "SELECT count() FROM profile WHERE host = 'epsilon'")" -lt 3000 ] && break
	sleep 0.1
done
"$analyze" load --clickhouse "$urls" "$d/half.sqlite" 2>"$d/load-half2.log" ||
	fail "resumed load: $(cat "$d/load-half2.log")"
[ "$(ch "SELECT count() FROM profile WHERE host = 'epsilon'")" = 3000 ] ||
	fail "resumed load: $(ch "SELECT count() FROM profile WHERE host = 'epsilon'") profile rows, want 3000"
[ "$(ch "SELECT count() FROM tasks WHERE host = 'epsilon'")" = 1 ] || fail "resumed load: tasks"
[ "$(ch "SELECT count() FROM files WHERE host = 'epsilon'")" = 1 ] || fail "resumed load: files"
[ "$(ch "SELECT sum(samples) FROM profile WHERE host = 'epsilon'")" = \
  "$(ch "SELECT sum(samples) FROM files WHERE host = 'epsilon'")" ] || fail "resumed load: samples"
echo "test_clickhouse: a load failed half-way, resumed: every row once"

# --- killed with SIGKILL at a random point, then run again until done
"$analyze" load --clickhouse "$urls" "$d/big.sqlite" 2>"$d/load-big.log" &
lpid=$!
# stacks go first, then profile's 400,000 rows in one insert (seconds on
# this VM): kill at a random point (0-4 s) after the stacks are stored
for _ in $(seq 300); do
	[ "$(ch "SELECT count() FROM stacks WHERE stack_id >= 7040")" -gt 0 ] && break
	kill -0 "$lpid" 2>/dev/null || break
	sleep 0.05
done
sleep "$((RANDOM % 4)).$((RANDOM % 10))"
kill -9 "$lpid" 2>/dev/null || true
wait "$lpid" 2>/dev/null || true
echo "test_clickhouse: killed the load at: $(ch "SELECT count() FROM profile WHERE host = 'delta'") of 400000 profile rows, $(ch "SELECT count() FROM files WHERE host = 'delta'") marker"
ok=
for _ in 1 2 3 4 5; do
	# an insert of the killed loader may still run on the server: the
	# next one is refused (same query_id) until it ends
	if "$analyze" load --clickhouse "$urls" "$d/big.sqlite" 2>"$d/load-big2.log"; then ok=1; break; fi
	grep -q "already running" "$d/load-big2.log" || fail "resume after kill: $(cat "$d/load-big2.log")"
	sleep 1
done
[ -n "$ok" ] || fail "resume after kill: $(cat "$d/load-big2.log")"
[ "$(ch "SELECT count() FROM profile WHERE host = 'delta'")" = 400000 ] ||
	fail "after kill and resume: $(ch "SELECT count() FROM profile WHERE host = 'delta'") profile rows, want 400000"
[ "$(ch "SELECT count() FROM files WHERE host = 'delta'")" = 1 ] || fail "after kill and resume: files"
[ "$(ch "SELECT count() FROM offcpu_profile WHERE host = 'delta'")" = \
  "$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM (SELECT 1 FROM offcpu GROUP BY host, start_ns - start_ns % 60000000000, comm, pid, tid, state, stack_id)").fetchone()[0])' "$d/big.sqlite")" ] ||
	fail "after kill and resume: offcpu_profile"
# (the made-up rows: 100 of 5 us, half of them sums of 2 blocks)
[ "$(ch "SELECT sum(blocks), sum(off_ns) FROM offcpu_profile WHERE host = 'delta'")" = "150	500000" ] ||
	fail "after kill and resume: offcpu_profile sums $(ch "SELECT sum(blocks), sum(off_ns) FROM offcpu_profile WHERE host = 'delta'")"
[ "$(ch "SELECT count() FROM (SELECT stack_id, depth FROM stacks GROUP BY stack_id, depth HAVING count() > 1)")" = 0 ] ||
	fail "duplicate stacks after kill and resume (before any merge)"
echo "test_clickhouse: killed and resumed: every row once"

# --- a counters table of an older shape (no cpu, pid): the insert names
# its columns, so the server refuses it, naming the column, and stores
# nothing in the wrong columns
ch "RENAME TABLE counters TO counters_saved"
ch "CREATE TABLE counters (file_key Int64, host String, time_ns Int64, event String, group_leader String, value Int64, enabled_ns Int64, running_ns Int64, scaled Nullable(Float64)) ENGINE = Memory"
if "$analyze" load --clickhouse "$CH_URL1" "$d/old.sqlite" 2>"$d/load-old.log"; then
	fail "a load into an older counters table succeeded"
fi
grep -q "ClickHouse at $CH_URL1: error [0-9]*: .*cpu" "$d/load-old.log" ||
	fail "the older table's refusal does not name the column: $(cat "$d/load-old.log")"
[ "$(ch "SELECT count() FROM counters")" = 0 ] || fail "rows stored in an older counters table"
ch "DROP TABLE counters"
ch "RENAME TABLE counters_saved TO counters"
echo "test_clickhouse: an older counters table refused by column"

# --- an unreachable server
dead=$(free_ports 1)
if "$analyze" load --clickhouse "http://127.0.0.1:$dead" "$d/half.sqlite" 2>"$d/dead.log"; then
	fail "a load into nothing succeeded"
fi
grep -q "cannot reach ClickHouse at http://127.0.0.1:$dead" "$d/dead.log" ||
	fail "unreachable: $(cat "$d/dead.log")"
echo "test_clickhouse: PASS"
