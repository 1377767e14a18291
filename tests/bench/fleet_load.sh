#!/usr/bin/env bash
# fleet_load.sh - the fleet path under N simulated hosts, on loopback:
#
#   tests/bench/fleet_load.sh [BUILD_DIR] [SECONDS] [N...]     (default 10 s; 50 200 1000)
#
# A 3-node nats-server cluster at NATS's defaults (max_payload 1 MiB), two
# `perfrec collect --nats` (R3 stream; --max-sessions raised to N, so
# either can take every host), one `perfrec archive` (ARCHIVERS=2: two
# sharing the durable consumer). The hosts are tests/bench/fleet_load: each streams the
# frames of a real recording made here first (this machine's 2 CPUs,
# frames cut to 960k as a recorder at NATS's default cuts them), at the
# bytes per second a production host of its size sends (below):
#   49% 99 Hz -g, 16 CPUs      49% 99 Hz -g, 64 CPUs
#   1% 4 kHz -g --switch-events, 16 CPUs    1% 4 kHz -g, 32 CPUs
# Per N, for SECONDS of frames and then until every frame is acknowledged
# and archived: frames/s and MB/s stored, CPU per MB of the collectors,
# the nats-servers and the archivers (from /proc/PID/stat), publish-ack
# latency p50/p99 (frame sent -> the collector's ack, which follows
# JetStream's), archive lag (largest backlog of acknowledged bytes not yet
# in files, and the drain time after the last ack), and per host whether
# its archive file equals what it sent (lost / duplicated / missing).
# Figures, not pass/fail (exit 1 only when a host's archive is wrong);
# run as root (it records the source traces).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
secs=${2:-10}
shift $(($# > 2 ? 2 : $#))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(50 200 1000)
perfrec=$build/recorder/perfrec
pingpong=$build/tests/pingpong
gen=$build/tests/fleet_load
for x in "$perfrec" "$pingpong" "$gen"; do
	[ -x "$x" ] || { echo "missing $x: build first (tests/build.sh $build)" >&2; exit 2; }
done
command -v nats-server >/dev/null || { echo "fleet_load: needs nats-server" >&2; exit 2; }
tmp=$(mktemp -d /tmp/fleet_load.XXXXXX)
bg=()
# shellcheck source=../lib/nats_cluster.sh
source "$src/tests/lib/nats_cluster.sh"
cleanup() {
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
	nats_cluster_stop 2>/dev/null || true
	wait 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }
ticks() { local s=0 p; for p in "$@"; do s=$((s + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done; echo $s; }
hz=$(getconf CLK_TCK)
ncpu=$(nproc)

# --- the source recordings: what the simulated hosts send, frame for
# frame (8 s of this machine, -a, frames flushed every 4 s). The pace is
# that of a production host, not of this VM (six builds at once: process
# churn makes its 99 Hz recordings ~84 B per sample): 23 B per sample
# with callchains, as docs/fleet.md measured over a parallel compile, and
# 3 B per context switch (a switch-heavy recording's figure there), at
# 5,000 switches per CPU-second.
rec() {   # NAME WORKLOAD_ARGS... -- RECORD_OPTS...
	local name=$1; shift
	local wl=()
	while [ "$1" != -- ]; do wl+=("$1"); shift; done
	shift
	"$pingpong" "${wl[@]}" >/dev/null &
	local w=$!
	"$perfrec" record -a "$@" --frame-size 960k --flush-ms 4000 -d 8 -q -o "$tmp/$name.prec" \
		2>"$tmp/$name.err"
	kill "$w" 2>/dev/null || true; wait "$w" 2>/dev/null || true
}
echo "== source recordings (8 s each, $ncpu CPUs)"
rec f99 1000000000 0 0 500 -- -g -F 99
rec f4k 1000000000 0 0 500 -- -g -F 4000
rec f4ks 1000000000 0 0 50 -- -g -F 4000 --switch-events
# bytes per second: CPUs x (Hz x 23 + switches x 3)
rate() { calc "$1 * ($2 * 23 + $3 * 3)"; }
classes=(
	"$tmp/f99.prec:$(rate 16 99 0):49"
	"$tmp/f99.prec:$(rate 64 99 0):49"
	"$tmp/f4ks.prec:$(rate 16 4000 5000):1"
	"$tmp/f4k.prec:$(rate 32 4000 0):1"
)
perhost=$(calc "($(rate 16 99 0) * 49 + $(rate 64 99 0) * 49 + $(rate 16 4000 5000) + $(rate 32 4000 0)) / 100")
printf '  hosts: 49%% 99 Hz -g 16 CPUs (%.0f kB/s), 49%% 99 Hz -g 64 CPUs (%.0f kB/s), 1%% 4 kHz -g --switch-events 16 CPUs (%.0f kB/s), 1%% 4 kHz -g 32 CPUs (%.0f kB/s): mean %.0f kB/s\n' \
	"$(calc "$(rate 16 99 0) / 1000")" "$(calc "$(rate 64 99 0) / 1000")" \
	"$(calc "$(rate 16 4000 5000) / 1000")" "$(calc "$(rate 32 4000 0) / 1000")" "$(calc "$perhost / 1000")"

NATS_DEFAULT_PAYLOAD=1 nats_cluster_start "$tmp/nats" >/dev/null
mapfile -t ports < <(free_ports 2)
# each collector may have to take every host (the other one down)
maxs=$(printf '%s\n' "${sizes[@]}" | sort -n | tail -n 1)
maxs=$((maxs > 256 ? maxs : 256))
colls=()
for i in 0 1; do
	"$perfrec" collect --listen "127.0.0.1:${ports[$i]}" --nats "$NATS_URLS" \
		--max-sessions "$maxs" 2>"$tmp/coll$i.log" &
	colls+=("$!"); bg+=("$!")
	for _ in $(seq 300); do grep -q "listening on" "$tmp/coll$i.log" 2>/dev/null && break; sleep 0.1; done
	grep -q "listening on" "$tmp/coll$i.log" || { echo "collector $i did not start" >&2; cat "$tmp/coll$i.log" >&2; exit 1; }
done
archs=()
for i in $(seq 0 $((${ARCHIVERS:-1} - 1))); do
	"$perfrec" archive --nats "$NATS_URLS" --dir "$tmp/arch" 2>"$tmp/archive$i.log" &
	archs+=("$!"); bg+=("$!")
done
nats=("$NATS_PID_1" "$NATS_PID_2" "$NATS_PID_3")

printf '\n| hosts | offered MB/s | stored frames/s | stored MB/s | collectors ms CPU/MB | nats-servers ms CPU/MB | archivers ms CPU/MB | ack p50 / p99 ms | archive lag: max MB, drain s | reconnects | lost / dup / missing hosts |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
bad=0
for n in "${sizes[@]}"; do
	c0=$(ticks "${colls[@]}"); s0=$(ticks "${nats[@]}"); a0=$(ticks "${archs[@]}")
	code=0
	line=$("$gen" --to "127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}" --hosts "$n" \
		--seconds "$secs" --prefix "n$n" --archive "$tmp/arch" "${classes[@]}") || code=$?
	c1=$(ticks "${colls[@]}"); s1=$(ticks "${nats[@]}"); a1=$(ticks "${archs[@]}")
	echo "$line" >>"$tmp/raw.txt"
	eval "$(echo "$line" | tr ' ' '\n' | sed 's/^/r_/')"
	mb=$(calc "$r_bytes / 1e6")
	printf '| %d | %.1f | %.0f | %.1f | %.2f | %.2f | %.2f | %.0f / %.0f | %.1f, %.1f | %d | %d / %d / %d |\n' \
		"$n" "$(calc "$perhost * $n / 1e6")" "$r_frames_per_s" "$r_mb_per_s" \
		"$(calc "($c1 - $c0) / $hz * 1000 / $mb")" "$(calc "($s1 - $s0) / $hz * 1000 / $mb")" \
		"$(calc "($a1 - $a0) / $hz * 1000 / $mb")" "$r_ack_p50_ms" "$r_ack_p99_ms" \
		"$r_max_archive_lag_mb" "$r_archive_drain_s" "$r_reconnects" \
		"$r_hosts_lost" "$r_hosts_dup" "$r_hosts_missing"
	[ "$code" = 0 ] || bad=1
done
echo
cat "$tmp/raw.txt"
exit $bad
