#!/usr/bin/env bash
# test_archive_load.sh - `perfrec archive --load-clickhouse`: a 3-node NATS
# cluster, a collector, an archiver that hands each completed file to
# `perfrec-analyze load`, two ClickHouse shards (tests/lib/clickhouse.sh).
#   - two recordings streamed at once (each keeps a local -o copy) while
#     shard 2 is down: each file's load fails, logged with its exit
#     status, while archiving goes on; shard 2 started again, the retry
#     loads both files;
#   - the files table holds each session's row; the profile rows in
#     ClickHouse equal `perfrec-analyze query` over the archived files;
#   - the archived files equal their local copies byte for byte (a load
#     only reads the archive).
# CI installs nats-server and clickhouse-server: there it never skips.
set -euo pipefail
. "$(dirname "$0")/../lib/kerntest.sh"
. "$(dirname "$0")/../lib/clickhouse.sh"
. "$(dirname "$0")/../lib/nats_cluster.sh"
kt_begin test_archive_load archload
kt_on_exit() { ch_cluster_stop; nats_cluster_stop 2>/dev/null; }
kt_on_fail() { kt_tail_logs "$d"/*.log "$d"/*.err "$d"/ch/ch*/server.err.log; }
kt_need_nats
kt_need_perf
if ! ch_server_bin >/dev/null || ! command -v clickhouse-client >/dev/null; then
	skip "clickhouse-server not installed (tests/install-deps.sh installs it)"
fi

ch_cluster_start "$d/ch" || fail "clickhouse servers did not start"
urls="$CH_URL1,$CH_URL2"
nats_cluster_start "$d/nats" || fail "the NATS cluster did not start"
port=$(nats_free_ports 1)
"$perfrec" collect --listen "127.0.0.1:$port" --nats "$NATS_URLS" 2>"$d/coll.log" &
pids+=("$!")
for _ in $(seq 600); do
	grep -q "listening on" "$d/coll.log" 2>/dev/null && break
	sleep 0.1
done
grep -q "listening on" "$d/coll.log" || fail "the collector did not listen within 60 s"

# (perfrec-analyze is not beside perfrec in the build tree: --analyzer)
"$perfrec" archive --nats "$NATS_URLS" --dir "$d/arch" --load-clickhouse "$urls" \
	--analyzer "$analyze" --load-jobs 1 2>"$d/archive.log" &
archiver=$!
pids+=("$archiver")

# --- shard 2 down: the loads fail, archiving does not wait for them
ch_kill 2
step "recording alpha and beta with shard 2 down"
"$build/tests/pingpong" 100000000 6 0 200 >/dev/null &
pids+=("$!")
rec=()
for h in alpha beta; do
	"$perfrec" record -a -g -e cpu-clock -F 499 -d 3 -q --counters '{task-clock,page-faults}' \
		-I 200ms -o "$d/local-$h.prec" --to "127.0.0.1:$port" --host "$h" --session s1 \
		--finish-timeout 60s 2>"$d/rec-$h.err" &
	rec+=("$!")
done
for i in "${!rec[@]}"; do wait "${rec[$i]}" || fail "recording $i failed: $(cat "$d"/rec-*.err)"; done

waitlog() {   # PATTERN COUNT SECONDS
	local n=0
	for _ in $(seq $(($3 * 10))); do
		n=$(grep -c -- "$1" "$d/archive.log" || true)
		[ "$n" -ge "$2" ] && return 0
		kill -0 "$archiver" 2>/dev/null || fail "the archiver exited: $(tail -5 "$d/archive.log")"
		sleep 0.1
	done
	fail "the archiver logged '$1' $n times, not $2, within $3 s"
}
waitlog " complete (" 2 60
waitlog "the load exited with status 1; trying again in 10 s" 2 60
for h in alpha beta; do
	grep -q "loading $d/arch/$h/s1.prec: the load exited with status 1" "$d/archive.log" ||
		fail "no failed load logged for $h"
	# archived while its load failed: the file is whole
	cmp "$d/local-$h.prec" "$d/arch/$h/s1.prec" || fail "$h's archive differs from its local copy"
done
grep -q "$CH_URL2" "$d/archive.log" || fail "the failed loads do not name the down server"
echo "test_archive_load: shard 2 down: both loads failed (exit 1, logged), both files archived whole"

# --- shard 2 back: the retries load both files
ch_start 2
ch_wait 2 || fail "clickhouse server 2 did not start again"
step "shard 2 back"
waitlog "s1.prec loaded" 2 150
ch() { ch_query 1 "$1"; }
[ "$(ch "SELECT count() FROM files")" = 2 ] || fail "files table: $(ch "SELECT host, session, path FROM files")"
for h in alpha beta; do
	cmp "$d/local-$h.prec" "$d/arch/$h/s1.prec" || fail "$h's archive changed after its load"
done

# --- the same rows of ClickHouse and of query over the archived files
# (both in CSV, read by Python's csv module, sorted, compared as text)
rows() {   # CSV [skip-header]
	python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))[int(sys.argv[2]):]
for r in sorted(["" if v == "\\N" else v for v in r] for r in rows):
    print("\t".join(r).encode("unicode_escape").decode())' "$1" "$2"
}
same() {   # NAME SQL
	"$analyze" query --csv "$2" "$d/arch" >"$d/q-$1.csv" 2>"$d/q-$1.err" ||
		fail "query $1: $(cat "$d/q-$1.err")"
	ch "$2 FORMAT CSV" >"$d/ch-$1.csv" || fail "clickhouse $1"
	rows "$d/q-$1.csv" 1 >"$d/lite-$1.rows"
	rows "$d/ch-$1.csv" 0 >"$d/ch-$1.rows"
	if ! cmp -s "$d/lite-$1.rows" "$d/ch-$1.rows"; then
		diff "$d/lite-$1.rows" "$d/ch-$1.rows" >&2 || true
		fail "$1: query over the archive and ClickHouse differ"
	fi
	[ -s "$d/ch-$1.rows" ] || fail "$1: no rows"
	echo "test_archive_load: $1: $(wc -l <"$d/ch-$1.rows") rows equal"
}
same files "SELECT host, session, start_ns, end_ns, bytes, samples, whole FROM files"
# (both recordings name this machine in their headers: a row per file in
# ClickHouse is a row of both files' samples in query's view, so summed)
same profile "SELECT host, minute, comm, pid, stack_id, sum(samples), sum(period) FROM profile GROUP BY host, minute, comm, pid, stack_id"
same counters "SELECT host, event, count(*), sum(value) FROM counters GROUP BY host, event"
n=$(ch "SELECT sum(samples) FROM profile")
[ "$n" -gt 100 ] || fail "only $n samples loaded"

# --- stopped: nothing left waiting, the counts said
kill "$archiver"
wait "$archiver" || fail "the archiver exited $? when stopped"
grep -q "sessions completed, 2 loaded (2 failed loads, 0 waiting)" "$d/archive.log" ||
	fail "archiver's summary: $(grep stopped "$d/archive.log")"
echo "test_archive_load: alpha and beta archived and loaded by the archiver ($n samples)"
