#!/usr/bin/env bash
# test_stream_origin.sh - two real recordings streamed under one host and
# session name (two `record --session same` on one host): the second is
# refused with the reason, is never acknowledged, and the archive is the
# first one's local copy byte for byte. With --dir (the archive keeps the
# owner's stream id beside the file) and, when nats-server is installed,
# with --nats (the owner's id travels in the Perfrec-Origin header), where
# a collector started after the first recording ended still refuses a
# second one. (Before stream ids, the second took the session over, was
# "acknowledged" for frames it never sent, and its samples were lost.)
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_stream_origin origin
# shellcheck source=../lib/nats_cluster.sh
source "$src/tests/lib/nats_cluster.sh"
kt_on_fail() { kt_tail_logs "$d"/*.log "$d"/rec*.err; }
kt_need_perf
# start_collector LOG [collect options...]: on a port of its choosing (cport)
start_collector() {
  local log=$1
  shift
  clog=$log
  "$perfrec" collect --listen 127.0.0.1:0 "$@" 2>>"$log" &
  cpid=$!
  pids+=("$cpid")
  for _ in $(seq 300); do
    cport=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$log" 2>/dev/null || true)
    [ -n "$cport" ] && return 0
    kill -0 "$cpid" 2>/dev/null || fail "the collector exited"
    sleep 0.1
  done
  fail "the collector did not listen"
}
# record NAME SECONDS: a recording streamed as h1/same, with a local copy
record() {
  clog_n0=$(grep -c "another recording" "$clog" || true)
  "$perfrec" record -a -e cpu-clock -F 1000 -d "$2" --to "127.0.0.1:$cport" --host h1 \
    --session same --frame-size 256k --finish-timeout 3s -o "$d/$1.prec" 2>"$d/rec-$1.err" &
  rpid=$!
  pids+=("$rpid")
}
# refused NAME WHAT: NAME was refused once, for good: its streaming ended
# within 2 s of the collector's refusal (no retries), it recorded on into
# its -o copy and exited 1; it was never acknowledged, and said why
refused() {
  local ended="" code=0 t_ref="" n
  for _ in $(seq 200); do
    n=$(grep -c "another recording" "$clog" || true)
    if [ -z "$t_ref" ] && [ "$n" -gt "$clog_n0" ]; then
      t_ref=$(date +%s.%N)
    fi
    if [ -n "$t_ref" ] && grep -q "streaming to 127.0.0.1:$cport ended" "$d/rec-$1.err"; then
      ended=$(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t_ref }")
      break
    fi
    sleep 0.05
  done
  wait "$rpid" || code=$?
  [ -n "$ended" ] || fail "$2: the refused recording's streaming did not end within 10 s"
  awk "BEGIN { exit !($ended < 2.0) }" || fail "$2: streaming ended ${ended}s after the refusal"
  n=$(grep -c "another recording" "$clog" || true)
  [ "$n" = $((clog_n0 + 1)) ] || fail "$2: refused $((n - clog_n0)) times, not once"
  [ "$code" = 1 ] || fail "$2: the refused recording exited $code, not 1"
  grep -q "recording goes on into" "$d/rec-$1.err" || fail "$2: no word of the local copy"
  "$analyze" verify "$d/$1.prec" >/dev/null || fail "$2: the refused recording's local copy does not verify"
  grep -q "another recording" "$d/rec-$1.err" || fail "$2: the second recording was not refused"
  grep -q "waiting for .* to acknowledge" "$d/rec-$1.err" &&
    fail "$2: the summary waits for acknowledgements of a refused stream"
  grep -q "ended by the collector's refusal" "$d/rec-$1.err" ||
    fail "$2: the stream's summary does not say it was refused"
  grep -q " 0 acknowledged" "$d/rec-$1.err" || fail "$2: the second recording was acknowledged"
  grep -q "18446744073709" "$d/rec-$1.err" && fail "$2: a counter wrapped"
  return 0
}

# ---- 1. an archive directory
start_collector "$d/coll1.log" --dir "$d/arch"
record a 3
a=$rpid
sleep 0.5
record b 2
refused b "--dir, live"
wait "$a" || fail "--dir: the first recording failed"
cmp "$d/a.prec" "$d/arch/h1/same.prec" || fail "--dir: the archive is not the first recording"
# the owner has gone; its file is still another recording's
record c 1
refused c "--dir, after the first"
cmp "$d/a.prec" "$d/arch/h1/same.prec" || fail "--dir: the archive changed"
grep -q "being streamed by another recording" "$d/coll1.log" || fail "--dir: no live refusal logged"
grep -q "the archive of h1/same holds" "$d/coll1.log" || fail "--dir: no archive refusal logged"
kill "$cpid"
echo "test_stream_origin: --dir: the second recordings were refused; the archive is the first"

# ---- 2. JetStream
if ! command -v nats-server >/dev/null; then
  skip "JetStream part: no nats-server (tests/install-deps.sh installs it)"
fi
nport=$(nats_free_ports 1)
nats-server -js -sd "$d/store" -a 127.0.0.1 -p "$nport" >"$d/nats.log" 2>&1 &
pids+=("$!")
for _ in $(seq 100); do grep -q "Server is ready" "$d/nats.log" && break; sleep 0.1; done
start_collector "$d/coll2.log" --nats "nats://127.0.0.1:$nport" --replicas 1
record a 3
a=$rpid
sleep 0.5
record b 2
refused b "--nats, live"
wait "$a" || fail "--nats: the first recording failed"
kill "$cpid"
# a collector that never saw the first recording learns its id from the stream
start_collector "$d/coll3.log" --nats "nats://127.0.0.1:$nport" --replicas 1
record c 1
refused c "--nats, another collector"
grep -q "JetStream stream PERFREC for h1/same holds" "$d/coll3.log" ||
  fail "--nats: no refusal from the stream's origin logged"
echo "test_stream_origin: --nats: the second recordings were refused by the stream's origin"
