#!/usr/bin/env bash
# test_fleet.sh - the fleet path on one machine: a 3-node JetStream cluster
# (nats-server, loopback, temp dirs), two collectors publishing into an R3
# stream, one archiver writing files, three recorders streaming real
# recordings (each keeps a local -o copy) with both collectors as --to.
# Mid-run, one NATS node, one collector and the archiver are killed with
# -9; the collector and the archiver are restarted. Every archived file
# must equal its local copy byte for byte and verify whole.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_fleet fleet
pingpong=$build/tests/pingpong
# shellcheck source=../lib/nats_cluster.sh
source "$src/tests/lib/nats_cluster.sh"
kt_on_exit() { nats_cluster_stop 2>/dev/null; }
kt_on_fail() { kt_tail_logs "$d"/*.log "$d"/rec*.err; }
kt_need_nats
kt_need_perf

nats_cluster_start "$d/nats" || fail "the NATS cluster did not start"
echo "test_fleet: NATS at $NATS_URLS"

{ read -r port_a; read -r port_b; } < <(nats_free_ports 2)
start_collector() {   # NAME PORT
  "$perfrec" collect --listen "127.0.0.1:$2" --nats "$NATS_URLS" --replicas 3 \
    2>>"$d/coll-$1.log" &
  local pid=$!
  eval "coll_$1=$pid"
  pids+=("$pid")
  # It listens once its JetStream stream answers: after a node's kill -9
  # that can wait out a new stream leader's election (4-9 s of Raft
  # timeouts, plus the 5 s request timeout it retries after).
  for _ in $(seq 600); do
    grep -q "listening on" "$d/coll-$1.log" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || fail "collector $1 exited: $(tail -5 "$d/coll-$1.log")"
    sleep 0.1
  done
  fail "collector $1 did not listen within 60 s: $(tail -5 "$d/coll-$1.log")"
}
start_archiver() {
  "$perfrec" archive --nats "$NATS_URLS" --dir "$d/arch" --ack-wait 3s 2>>"$d/archive.log" &
  archiver=$!
  pids+=("$archiver")
}
start_collector a "$port_a"
start_collector b "$port_b"
start_archiver

"$pingpong" 100000000 10 >/dev/null &
pp=$!
pids+=("$pp")

rec=()
for i in 1 2 3; do
  if [ "$i" = 2 ]; then to="127.0.0.1:$port_b,127.0.0.1:$port_a"; else to="127.0.0.1:$port_a,127.0.0.1:$port_b"; fi
  "$perfrec" record -a -F 500 --switch-events -d 8 --frame-size 256k -o "$d/local$i.prec" \
    --to "$to" --host "host$i" --session "fleet$i" --finish-timeout 60s 2>"$d/rec$i.err" &
  rec+=("$!")
  pids+=("$!")
done

sleep 3
echo "test_fleet: kill -9 NATS node 3, collector a, the archiver"
nats_kill 3
kill -9 "$coll_a" "$archiver"
sleep 1.5
start_collector a "$port_a"
start_archiver

for i in 1 2 3; do
  code=0
  wait "${rec[$((i - 1))]}" || code=$?
  [ "$code" = 0 ] || fail "recorder $i exited $code"
  grep -q " 0 dropped" "$d/rec$i.err" || fail "recorder $i dropped frames"
  grep "streamed to" "$d/rec$i.err" || fail "recorder $i did not say what it streamed: $(cat "$d/rec$i.err")"
done
kill "$pp" 2>/dev/null || true

# the archiver finishes each session (its index) on its own
for _ in $(seq 300); do
  n=$("$perfrec" archive --list "$d/arch" 2>/dev/null | grep -c ' complete$' || true)
  [ "$n" -ge 3 ] && break
  sleep 0.2
done
"$perfrec" archive --list "$d/arch" | tee "$d/list.out"
for i in 1 2 3; do
  f="$d/arch/host$i/fleet$i.prec"
  [ -f "$f" ] || fail "no archive for recorder $i"
  cmp "$d/local$i.prec" "$f" || fail "archive $i differs from its local copy"
  "$analyze" verify "$f" >/dev/null || fail "archive $i does not verify"
done
grep -q "complete" "$d/archive.log" || fail "the archiver did not complete sessions"
echo "test_fleet: 3 archives == their local copies, verified, after killing a NATS node, a collector and the archiver"
