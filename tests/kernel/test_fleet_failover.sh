#!/usr/bin/env bash
# test_fleet_failover.sh - the README's fleet example, word for word, on
# a 3-node `nats-server -js` cluster at its defaults (max_payload 1 MiB):
# one `collect --nats`, one `archive`, and `record -a --switch-events -d 10
# --to ... -o local.prec` with no option added. Mid-stream the node that
# leads the PERFREC stream and the collector are killed with -9; the
# collector is restarted with its same command line (the node stays down:
# two of three keep the stream's quorum). The recorder must end with
# every frame acknowledged and nothing dropped, and the archived file
# must equal the local copy byte for byte, as the README promises (and so
# packet for packet: `perfrec-analyze dump` of both is compared as well).
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_fleet_failover fleetko
pingpong=$build/tests/pingpong
# shellcheck source=../lib/nats_cluster.sh
source "$src/tests/lib/nats_cluster.sh"
kt_on_exit() { nats_cluster_stop 2>/dev/null; }
kt_on_fail() { kt_tail_logs "$d"/*.log "$d"/rec*.err "$d"/nats/n*.log; }
kt_need_nats
kt_need_perf

NATS_DEFAULT_PAYLOAD=1 nats_cluster_start "$d/nats" || fail "the NATS cluster did not start"
grep -q "max_payload" "$d"/nats/n1.conf && fail "the servers' config sets max_payload"
port=$(nats_free_ports 1)

start_collector() {
  # the log exists before the count below reads it (the background
  # redirection may create it only later: an empty count never grows)
  : >>"$d/coll.log"
  "$perfrec" collect --listen "127.0.0.1:$port" --nats "$NATS_URLS" 2>>"$d/coll.log" &
  coll=$!
  pids+=("$coll")
  # It listens once its JetStream stream answers, which after a node's
  # kill -9 can wait out the election of a new stream leader.
  local n0
  n0=$(grep -c "listening on" "$d/coll.log" 2>/dev/null || true)
  for _ in $(seq 600); do
    [ "$(grep -c "listening on" "$d/coll.log" 2>/dev/null || true)" -gt "$n0" ] && return 0
    kill -0 "$coll" 2>/dev/null || fail "the collector exited"
    sleep 0.1
  done
  fail "the collector did not listen within 60 s"
}
start_collector
"$perfrec" archive --nats "$NATS_URLS" --dir "$d/arch" 2>"$d/archive.log" &
pids+=("$!")

"$pingpong" 100000000 10 >/dev/null &
pids+=("$!")

step "recording for 10 s, streamed and kept in local.prec"
t0=$(date +%s)
"$perfrec" record -a --switch-events -d 10 --to "127.0.0.1:$port" -o "$d/local.prec" \
  2>"$d/rec.err" &
rec=$!
pids+=("$rec")

# The stream's leader is the node that last logged taking it over.
leader=""
for _ in $(seq 100); do
  leader=$(grep -l "new stream leader for '\$G > PERFREC'" "$d"/nats/n*.log 2>/dev/null |
    tail -n 1 | sed 's/.*n\([123]\)\.log$/\1/' || true)
  [ -n "$leader" ] && break
  sleep 0.1
done
[ -n "$leader" ] || fail "no node says it leads the PERFREC stream"
sleep 3
kill -0 "$rec" 2>/dev/null || fail "the recorder ended before the kills"
step "kill -9 NATS node $leader (the stream's leader) and the collector"
nats_kill "$leader"
kill -9 "$coll"
wait "$coll" 2>/dev/null || true
sleep 1
step "collector restarted"
start_collector

code=0
wait "$rec" || code=$?
cat "$d/rec.err" >&2
[ "$code" = 0 ] || fail "the recorder exited $code"
grep -q " 0 dropped" "$d/rec.err" || fail "the recorder dropped frames"
grep -q "resent" "$d/rec.err" || fail "the recorder's summary says nothing of resent frames"
# the new leader is another node
grep -l "new stream leader for '\$G > PERFREC'" "$d"/nats/n*.log | grep -v "n$leader.log" >/dev/null ||
  fail "no other node took over the stream"

# The archiver finishes the file (its index) when the stream ends.
for _ in $(seq 600); do
  "$perfrec" archive --list "$d/arch" 2>/dev/null | grep ' complete$' >/dev/null && break
  sleep 0.1
done
"$perfrec" archive --list "$d/arch" | tee "$d/list.out"
mapfile -t files < <(find "$d/arch" -name '*.prec')
[ "${#files[@]}" = 1 ] || fail "${#files[@]} archive files, not 1: ${files[*]}"
f=${files[0]}
grep -q ' complete$' "$d/list.out" || fail "the archive is not complete"
cmp "$d/local.prec" "$f" || fail "the archive differs from the local copy"
"$analyze" verify "$f" >/dev/null || fail "the archive does not verify"
"$analyze" dump "$d/local.prec" >"$d/local.dump"
"$analyze" dump "$f" >"$d/arch.dump"
cmp "$d/local.dump" "$d/arch.dump" || fail "the dumps differ"
packets=$(wc -l <"$d/local.dump")
[ "$packets" -gt 1000 ] || fail "only $packets packets recorded"
step "$packets packets, archive == local copy, in $(($(date +%s) - t0)) s"
echo "test_fleet_failover: ok"
