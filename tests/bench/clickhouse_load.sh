#!/usr/bin/env bash
# clickhouse_load.sh - the fleet's SQL in ClickHouse, in one run:
#
#   tests/bench/clickhouse_load.sh [BUILD_DIR] [SECONDS] [HOSTS]
#
# Two clickhouse-server shards on loopback (tests/lib/clickhouse.sh).
# A real recording (root: `perfrec record -a -g -F 999` for SECONDS,
# default 10, over a compile-like workload: calltree's deep stacks and
# pingpong's switches), one SQLite database of it (`query --db`), then:
# 1. load rows/s: the database loaded as HOSTS hosts (default 10: the
#    same rows under other host names, so each is a new file), wall time
#    of `perfrec-analyze load` per host and over all of them;
# 2. bytes per stored sample: ClickHouse's compressed bytes (system.parts,
#    active parts of both shards, after OPTIMIZE ... FINAL) over the
#    samples stored, for profile alone and for every table, next to the
#    .prec file's bytes per sample (the recording's own bytes);
# 3. a fleet query: top functions of one comm over all hosts and a day,
#    on a day made of the loaded rows (each host's rows repeated for the
#    1,440 minutes of a day inside ClickHouse: INSERT ... SELECT), median
#    of 5 runs, with the rows it read.
# Figures, never pass/fail; the machine may be shared (2 vCPUs here).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
secs=${2:-10}
nhosts=${3:-10}
perfrec=$build/recorder/perfrec
analyze=$build/analyzer/perfrec-analyze
. "$src/tests/lib/clickhouse.sh"
tmp=$(mktemp -d /tmp/clickhouse_load.XXXXXX)
pids=()
cleanup() {
	ch_cluster_stop
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
ch_cluster_start "$tmp/ch"
urls="$CH_URL1,$CH_URL2"
ch() { ch_query 1 "$1"; }
both() { ch_query 1 "$1"; ch_query 2 "$1"; }

# --- a real recording
"$build/tests/pingpong" 100000000 "$secs" 0 200 >/dev/null &
pids+=("$!")
( end=$((SECONDS + secs)); while [ $SECONDS -lt "$end" ]; do "$build/tests/calltree" >/dev/null 2>&1 || true; done ) &
pids+=("$!")
"$perfrec" record -a -g -F 999 -e cpu-clock -d "$secs" -q -o "$tmp/rec.prec" 2>"$tmp/rec.log"
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
wait "${pids[@]}" 2>/dev/null || true   # not the servers: they run until the end
pids=()
"$analyze" info --json "$tmp/rec.prec" >"$tmp/info.json"
samples=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["info"]["samples"])' "$tmp/info.json")
bytes=$(stat -c %s "$tmp/rec.prec")
"$analyze" query --db "$tmp/rec.sqlite" "$tmp/rec.prec" 2>"$tmp/db.log"
prof_rows=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM profile").fetchone()[0])' "$tmp/rec.sqlite")
minutes=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(DISTINCT minute) FROM profile").fetchone()[0])' "$tmp/rec.sqlite")
echo "recording: ${secs} s, $samples samples, $bytes bytes (.prec: $(awk "BEGIN { printf \"%.1f\", $bytes / $samples }") B/sample), $prof_rows profile rows over $minutes minute(s)"

# --- 1. load rows/s: HOSTS copies under other names
for i in $(seq "$nhosts"); do
	cp "$tmp/rec.sqlite" "$tmp/h$i.sqlite"
	python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for t in ("profile", "offcpu", "counters", "tasks", "files", "samples", "switches", "losses"):
    try:
        db.execute(f"UPDATE {t} SET host = ?", (sys.argv[2],))
    except sqlite3.OperationalError:
        pass
db.commit()' "$tmp/h$i.sqlite" "bench$i"
done
"$analyze" load --clickhouse "$urls" "$tmp/h1.sqlite" 2>"$tmp/load1.log"   # the tables and first file
t0=$(date +%s.%N)
"$analyze" load --clickhouse "$urls" $(for i in $(seq 2 "$nhosts"); do echo "$tmp/h$i.sqlite"; done) \
	2>"$tmp/load.log"
t1=$(date +%s.%N)
rows=$(sed -n 's/.* \([0-9]*\) rows, .*/\1/p' "$tmp/load.log" | tail -1)
sent=$(sed -n 's/.* rows, \([0-9]*\) bytes$/\1/p' "$tmp/load.log" | tail -1)
awk -v r="$rows" -v b="$sent" -v a="$t0" -v z="$t1" -v n="$((nhosts - 1))" -v s="$samples" 'BEGIN {
	w = z - a
	printf "load: %d files, %d rows (%.1f MB RowBinary) in %.2f s: %.0f rows/s, %.0f samples/s of recordings, %.2f s per file\n",
		n, r, b / 1e6, w, r / w, n * s / w, w / n }'

# --- 2. bytes per stored sample
both "OPTIMIZE TABLE profile_local FINAL" >/dev/null
both "OPTIMIZE TABLE stacks_local FINAL" >/dev/null
stored=$(ch "SELECT sum(samples) FROM profile")
part_bytes() {   # TABLE-REGEX: compressed bytes of active parts on both shards
	local a b
	a=$(ch_query 1 "SELECT sum(data_compressed_bytes) FROM system.parts WHERE active AND database = currentDatabase() AND match(table, '$1')")
	b=$(ch_query 2 "SELECT sum(data_compressed_bytes) FROM system.parts WHERE active AND database = currentDatabase() AND match(table, '$1')")
	echo $((a + b))
}
pb=$(part_bytes '^profile_local$')
sb=$(part_bytes '^stacks_local$')
ab=$(part_bytes '_local$')
awk -v s="$stored" -v pb="$pb" -v sb="$sb" -v ab="$ab" -v fb="$bytes" -v fs="$samples" -v n="$nhosts" 'BEGIN {
	printf "stored: %d samples of %d hosts\n", s, n
	printf "  %-38s %10s %12s\n", "", "bytes", "B/sample"
	printf "  %-38s %10d %12.2f\n", "ClickHouse profile", pb, pb / s
	printf "  %-38s %10d %12.2f\n", "ClickHouse stacks (shared by hosts)", sb, sb / s
	printf "  %-38s %10d %12.2f\n", "ClickHouse, every table", ab, ab / s
	printf "  %-38s %10d %12.2f\n", ".prec file (one host)", fb, fb / fs
}'

# --- 3. a fleet query over a day: each host's rows repeated per minute
m0=$(ch "SELECT min(minute) FROM profile")
day0=$((m0 - m0 % 86400000000000))
skip=$(((m0 - day0) / 60000000000))
# as many of the day's minutes as keep the table under ~10M rows (this
# VM's memory and disk): the figure says how many rows the query read
have=$(ch "SELECT count() FROM profile")
copies=$((10000000 / have)); [ "$copies" -gt 1440 ] && copies=1440; [ "$copies" -lt 1 ] && copies=1
t0=$(date +%s.%N)
# on each shard, its own hosts' rows: no rows cross the network
both "INSERT INTO profile_local SELECT file_key, host, $day0 + number * 60000000000 + (minute - $m0), comm, pid, stack_id, samples, period FROM profile_local CROSS JOIN numbers($copies) WHERE number != $skip"
t1=$(date +%s.%N)
day_rows=$(ch "SELECT count() FROM profile")
comm=$(ch "SELECT comm FROM profile GROUP BY comm ORDER BY sum(samples) DESC LIMIT 1")
echo "a day: $copies minutes of $nhosts hosts, $day_rows profile rows ($(awk -v a="$t0" -v z="$t1" 'BEGIN { printf "%.1f", z - a }') s to make), top comm '$comm'"
q="SELECT sym, sum(samples) AS n FROM profile GLOBAL ANY INNER JOIN (SELECT stack_id, sym FROM stacks WHERE depth = 0) USING stack_id WHERE comm = '$comm' AND minute >= $day0 AND minute < $day0 + 86400000000000 GROUP BY sym ORDER BY n DESC LIMIT 10"
ts=()
for _ in 1 2 3 4 5; do
	curl -s -o /dev/null -w '%{time_total}\n' "$CH_URL1/" --data-binary "$q FORMAT TSV" >>"$tmp/times"
done
med=$(sort -n "$tmp/times" | sed -n 3p)
echo "fleet query (top functions of '$comm', all $nhosts hosts, one day): median of 5: ${med} s"
ch "$q FORMAT TSV" | head -10
