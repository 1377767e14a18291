#!/usr/bin/env bash
# stream_vs_file.sh - what streaming costs, in one run:
#
#   tests/bench/stream_vs_file.sh [BUILD_DIR] [SECONDS] [RUNS]
#
# 1. The recorder: `perfrec record -a -g --switch-events -F 10000` over the
#    pipe ping-pong, written to a file (-o) vs streamed to a collector on
#    loopback (--to), alternating, RUNS times each: recorder CPU per record
#    (user+sys of the recorder process) and bytes per second, medians.
#    Target: --to costs at most 1.1x the CPU of -o.
# 2. The collector: 8 synthetic senders (tests/bench/stream_bench: the real
#    protocol, pre-built frames of a real recording, so the senders cost
#    little) for SECONDS into one `perfrec collect`, archiving on disk and
#    on tmpfs: frames/s, MB/s, and the collector's CPU per MB (from
#    /proc/PID/stat). Target: one collector core sustains >= 500 MB/s.
# 3. The fleet path: the same 8 senders through one collector into an R3
#    JetStream stream of a 3-node nats-server cluster on loopback (with an
#    archiver writing the files), beside `collect --dir`; and the
#    end-to-end latency of a frame (sent -> in the archive file) both ways.
#    Skipped when nats-server is not installed.
# Figures, never pass/fail; run it by hand as root on a quiet machine.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
secs=${2:-5}
runs=${3:-3}
perfrec=$build/recorder/perfrec
pingpong=$build/tests/pingpong
bench=$build/tests/stream_bench
tmp=$(mktemp -d /tmp/stream_vs_file.XXXXXX)
shm=$(mktemp -d /dev/shm/stream_vs_file.XXXXXX)
coll=
wl=
cleanup() {
	[ -n "$wl" ] && kill "$wl" 2>/dev/null || true
	[ -n "$coll" ] && kill "$coll" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp" "$shm"
}
trap cleanup EXIT
for x in "$perfrec" "$pingpong" "$bench"; do
	[ -x "$x" ] || { echo "missing $x: build first (tests/build.sh $build)" >&2; exit 2; }
done

. "$(dirname "$0")/../lib/ports.sh"
port=$(free_ports 1)
start_collector() {   # DIR
	"$perfrec" collect --listen "127.0.0.1:$port" --dir "$1" 2>"$tmp/coll.log" &
	coll=$!
	for _ in $(seq 100); do grep -q listening "$tmp/coll.log" 2>/dev/null && return; sleep 0.05; done
	echo "collector did not start" >&2; exit 1
}
stop_collector() { kill "$coll"; wait "$coll" 2>/dev/null || true; coll=; }
start_nats_collector() {
	"$perfrec" collect --listen "127.0.0.1:$port" --nats "$NATS_URLS" 2>"$tmp/coll.log" &
	coll=$!
	for _ in $(seq 100); do grep -q listening "$tmp/coll.log" 2>/dev/null && return; sleep 0.1; done
	echo "collector did not start" >&2; cat "$tmp/coll.log" >&2; exit 1
}
# user+sys clock ticks of a pid
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }

echo "== recorder: -o vs --to (loopback), $runs x ${secs}s each, -a -g --switch-events -F 10000"
start_collector "$tmp/arch"
"$pingpong" 1000000000 0 0 >/dev/null &
wl=$!
sleep 0.5
for r in $(seq "$runs"); do
	for mode in file stream; do
		if [ $mode = file ]; then out=(-o "$tmp/f.prec"); else out=(--to "127.0.0.1:$port" --session "run$r"); fi
		/usr/bin/time -f "CPU %U %S" -o "$tmp/t" "$perfrec" record -a -g --switch-events \
			-F 10000 -d "$secs" "${out[@]}" 2>"$tmp/rec.err" || { cat "$tmp/rec.err"; exit 1; }
		cpu=$(awk '/^CPU / { print $2 + $3 }' "$tmp/t")
		recs=$(sed -n 's/^perfrec: \([0-9]*\) records in.*/\1/p' "$tmp/rec.err")
		if [ $mode = file ]; then b=$(stat -c %s "$tmp/f.prec"); else b=$(stat -c %s "$tmp/arch/"*/"run$r.prec"); fi
		lost=$(sed -n 's/.* \([0-9]*\) lost (.*/\1/p' "$tmp/rec.err")
		echo "$mode $cpu $recs $b $lost" >>"$tmp/rec.txt"
		printf '  run %d %-6s cpu %5.2f s  records %9d  ns/record %6.1f  bytes/s %9.0f  lost %s\n' \
			"$r" $mode "$cpu" "$recs" "$(calc "$cpu * 1e9 / $recs")" \
			"$(calc "$b / $secs")" "$lost"
	done
done
kill "$wl"; wait "$wl" 2>/dev/null || true; wl=
stop_collector
f_ns=$(awk '$1 == "file" { print $2 * 1e9 / $3 }' "$tmp/rec.txt" | median)
s_ns=$(awk '$1 == "stream" { print $2 * 1e9 / $3 }' "$tmp/rec.txt" | median)
printf 'recorder CPU per record (median): -o %.1f ns, --to %.1f ns: --to/-o = %.2fx (target <= 1.10x)\n' \
	"$f_ns" "$s_ns" "$(calc "$s_ns / $f_ns")"

# a real recording's frames for the synthetic senders
"$perfrec" record -a -g --switch-events -F 4000 -d 2 -q -o "$tmp/src.prec" -- \
	"$pingpong" 200000 0 0 >/dev/null 2>&1 || true
hz=$(getconf CLK_TCK)
for where in disk tmpfs; do
	if [ $where = disk ]; then dir=$tmp/arch8; else dir=$shm/arch8; fi
	start_collector "$dir"
	t0=$(ticks "$coll")
	line=$("$bench" "127.0.0.1:$port" 8 "$secs" "$tmp/src.prec")
	t1=$(ticks "$coll")
	stop_collector
	read -r _ frames _ bytes _ wall _ acked <<<"$line"
	cpu=$(calc "($t1 - $t0) / $hz")
	mb=$(calc "$bytes / 1000000")
	printf '== collector, 8 senders, %s: %d frames, %.0f MB in %.2f s: %.0f frames/s, %.1f MB/s; collector CPU %.2f s = %.2f ms per MB = %.0f MB/s per core (target >= 500)\n' \
		"$where" "$frames" "$mb" "$wall" "$(calc "$frames / $wall")" \
		"$(calc "$mb / $wall")" "$cpu" "$(calc "$cpu * 1000 / $mb")" \
		"$(calc "$mb / ($cpu + 0.0001)")"
done

command -v nats-server >/dev/null || { echo "== fleet: skipped (no nats-server)"; exit 0; }
# shellcheck source=../lib/nats_cluster.sh
source "$src/tests/lib/nats_cluster.sh"
trap 'nats_cluster_stop; cleanup' EXIT
nats_cluster_start "$tmp/nats" >/dev/null
"$perfrec" archive --nats "$NATS_URLS" --dir "$tmp/jarch" 2>"$tmp/archive.log" &
arch=$!
start_nats_collector
t0=$(ticks "$coll")
line=$("$bench" "127.0.0.1:$port" 8 "$secs" "$tmp/src.prec")
t1=$(ticks "$coll")
read -r _ frames _ bytes _ wall _ acked <<<"$line"
cpu=$(calc "($t1 - $t0) / $hz")
mb=$(calc "$bytes / 1000000")
printf '== collector -> JetStream R3 (3 nats-server on loopback), 8 senders: %d frames, %.0f MB in %.2f s: %.0f frames/s, %.1f MB/s; collector CPU %.2f s = %.2f ms per MB\n' \
	"$frames" "$mb" "$wall" "$(calc "$frames / $wall")" "$(calc "$mb / $wall")" "$cpu" \
	"$(calc "$cpu * 1000 / $mb")"
lat=$("$bench" "127.0.0.1:$port" 1 5 "$tmp/src.prec" --latency "$tmp/jarch")
echo "== end to end via JetStream (collector -> R3 stream -> archiver -> file): $lat"
stop_collector
kill "$arch"; wait "$arch" 2>/dev/null || true
start_collector "$tmp/arch-lat"
lat=$("$bench" "127.0.0.1:$port" 1 5 "$tmp/src.prec" --latency "$tmp/arch-lat")
echo "== end to end via collect --dir (collector -> file): $lat"
stop_collector
