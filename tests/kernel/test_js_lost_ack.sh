#!/usr/bin/env bash
# test_js_lost_ack.sh - records a JetStream stream does not store, and how
# a session gets past them without a hole.
#
# 1. The server dies with publishes in flight: their acknowledgements
# never come. One nats-server (-js, loopback, temp
# store), one collector publishing into an R1 stream, one recorder
# streaming a real recording (with a local -o copy). Mid-run the server is
# stopped (SIGSTOP: the collector's publishes pile up unanswered), then
# killed with -9 (they are lost) and started again on its store. The
# collector must give up on the lost publishes at their deadline, send the
# recorder away, and take the resend from what the stream holds: the
# recorder ends with every frame acknowledged (before the deadline it
# waited for ever, until its --finish-timeout), and the session archived
# from the stream equals the local copy byte for byte.
#
# 2. A hole: the stream refuses some records and stores later ones (a
# stream created beforehand with a small max_msg_size: the big frames are
# refused, the small ones after them stored — as when a publish is lost
# with a cluster's stream leader and the next ones reach the new leader).
# The collector fails the session at the refusal and the recorder comes
# back; its hello says which record it has not seen acknowledged, and the
# collector resumes there, not after the stream's last record. Once the
# limit is lifted every hole is filled: the archive from the stream equals
# the local copy. (Resuming after the last record, the archiver waited at
# the first hole for ever.)
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_js_lost_ack jsack
pingpong=$build/tests/pingpong
nats=
# shellcheck source=../lib/nats_cluster.sh
source "$src/tests/lib/nats_cluster.sh"
# a stopped server is continued, then killed like the rest
kt_on_exit() { [ -z "$nats" ] || { kill -CONT "$nats"; kill -9 "$nats"; } 2>/dev/null; }
kt_on_fail() { kt_tail_logs "$d"/*.log "$d"/rec*.err; }
kt_need_nats
kt_need_perf

{ read -r nport; read -r cport; read -r cport2; } < <(nats_free_ports 3)
url="nats://127.0.0.1:$nport"
start_nats() {   # LOG
  nats-server -js -sd "$d/store" -a 127.0.0.1 -p "$nport" >"$d/$1" 2>&1 &
  nats=$!
  for _ in $(seq 100); do
    grep -q "Server is ready" "$d/$1" 2>/dev/null && return 0
    kill -0 "$nats" 2>/dev/null || fail "nats-server exited"
    sleep 0.1
  done
  fail "nats-server did not start"
}
# recorder_done PID ERRFILE WHAT: it exited 0 with every frame acknowledged
# and none dropped; sets frames
recorder_done() {
  local code=0 sent a
  wait "$1" || code=$?
  [ "$code" = 0 ] || fail "$3: the recorder exited $code"
  sent=$(sed -n 's/.*: \([0-9]*\) frames sent, \([0-9]*\) acknowledged.*/\1 \2/p' "$2")
  read -r frames a <<<"$sent"
  [ -n "$frames" ] && [ "$frames" = "$a" ] || fail "$3: frames sent/acknowledged: '$sent'"
  grep -q " 0 dropped" "$2" || fail "$3: the recorder dropped frames"
}
# archived_equals STREAM DIR SESSION LOCAL WHAT: an archiver writes the
# stream into DIR; host h1's SESSION must equal LOCAL and verify
archived_equals() {
  local f="$2/h1/$3.prec"
  "$perfrec" archive --nats "$url" --stream "$1" --dir "$2" --ack-wait 3s 2>>"$2.log" &
  pids+=("$!")
  for _ in $(seq 300); do
    "$perfrec" archive --list "$2" 2>/dev/null | grep ' complete$' >/dev/null && break
    sleep 0.2
  done
  [ -f "$f" ] || fail "$5: nothing archived from the stream"
  cmp "$4" "$f" || fail "$5: the archived session differs from the local copy: $("$perfrec" archive --list "$2")"
  "$analyze" verify "$f" >/dev/null || fail "$5: the archived session does not verify"
}
# start_collector PORT LOG [collect options...]
start_collector() {
  local port=$1 log=$2
  shift 2
  "$perfrec" collect --listen "127.0.0.1:$port" --nats "$url" "$@" 2>>"$log" &
  pids+=("$!")
  for _ in $(seq 300); do
    grep -q "listening on" "$log" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "the collector on port $port did not listen"
}
start_nats nats1.log
start_collector "$cport" "$d/coll.log" --replicas 1

"$pingpong" 100000000 10 >/dev/null &
pids+=("$!")
"$perfrec" record -a -F 500 --switch-events -d 12 --frame-size 256k -o "$d/local.prec" \
  --to "127.0.0.1:$cport" --host h1 --session lost-ack --finish-timeout 60s 2>"$d/rec.err" &
rec=$!
pids+=("$rec")

sleep 3
echo "test_js_lost_ack: SIGSTOP nats-server for 1 s, then kill -9 and restart it"
kill -STOP "$nats"
sleep 1
{ kill -9 "$nats"; kill -CONT "$nats"; wait "$nats"; } 2>/dev/null || true
start_nats nats2.log

recorder_done "$rec" "$d/rec.err" "lost acks"
grep "streamed to" "$d/rec.err" || fail "the recorder did not say what it streamed"
[ "$(grep -c "session h1/lost-ack from record" "$d/coll.log")" -ge 2 ] ||
  fail "the session was never failed and resumed"
archived_equals PERFREC "$d/arch" lost-ack "$d/local.prec" "lost acks"
echo "test_js_lost_ack: $frames frames acknowledged; the archive from the stream == the local copy"

# ---- 2. holes
nats_js_api "$nport" '$JS.API.STREAM.CREATE.HOLES' \
  '{"name":"HOLES","subjects":["HOLES.>"],"storage":"file","num_replicas":1,"max_msg_size":8192,"duplicate_window":600000000000}' \
  >"$d/create.out" || fail "cannot create the stream HOLES: $(cat "$d/create.out")"
start_collector "$cport2" "$d/coll2.log" --stream HOLES
"$perfrec" record -a -F 500 --switch-events -d 6 --frame-size 256k -o "$d/local2.prec" \
  --to "127.0.0.1:$cport2" --host h1 --session holes --finish-timeout 60s 2>"$d/rec2.err" &
rec=$!
pids+=("$rec")
sleep 3
grep -q "JetStream refused record" "$d/coll2.log" ||
  fail "the stream refused nothing: $(cat "$d/coll2.log")"
nats_js_api "$nport" '$JS.API.STREAM.UPDATE.HOLES' \
  '{"name":"HOLES","subjects":["HOLES.>"],"storage":"file","num_replicas":1,"max_msg_size":-1,"duplicate_window":600000000000}' \
  >"$d/update.out" || fail "cannot lift the stream's limit: $(cat "$d/update.out")"
recorder_done "$rec" "$d/rec2.err" holes
archived_equals HOLES "$d/arch2" holes "$d/local2.prec" holes
refused=$(grep -c "JetStream refused record" "$d/coll2.log")
echo "test_js_lost_ack: holes: $refused refusals, $frames frames acknowledged; the archive from the stream == the local copy"
