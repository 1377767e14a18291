#!/usr/bin/env bash
# test_js_filled_hole.sh - where a stream resumes after a hole in its
# JetStream subject was filled. Record K (2, the /proc synthesis, unless
# another is larger) is refused (the JetStream stream's max_msg_size,
# lifted afterwards) while records K+1..7 are stored: a hole. The recorder
# comes back saying resend_from K; record K is stored, and is now the
# subject's last message though records up to 7 are older. A
# collector that never saw this stream (no memory of the hole), asked by a
# recorder that says no resend_from, must resume at 8: the filler carries
# how far the subject reached (Perfrec-Top). Before, it resumed at 3, and
# records 3..7 came again: duplicates, and the fence (ExpectLastSubjectSeq
# on the first record above the subject's end) sat on a duplicate that
# JetStream drops unevaluated.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_js_filled_hole jshole
# shellcheck source=../lib/nats_cluster.sh
source "$src/tests/lib/nats_cluster.sh"
kt_on_fail() { kt_tail_logs "$d"/*.log "$d"/*.out; }
kt_need_nats
kt_need_perf
client=$src/tests/lib/streamclient.py

step "a recording: one of its records 2..6 well above the others of 1..7"
# The hole goes where the recording has one record clearly larger than
# the rest: usually record 2 (the /proc synthesis), but on a busy machine
# a record carrying the symbols of new binaries may be as large, so the
# largest of records 2..6 is taken, and the recording made again (up to 5
# times) while two records are too close to refuse one alone.
k=0
for attempt in 1 2 3 4 5; do
  "$perfrec" record -a -e cpu-clock -F 200 -d 2 --flush-ms 100 -q -o "$d/src.prec" 2>"$d/src.err" ||
    fail "the recording failed: $(cat "$d/src.err")"
  mapfile -t sizes < <(python3 "$client" records "$d/src.prec")
  [ "${#sizes[@]}" -ge 8 ] || fail "only ${#sizes[@]} records"
  read -r k others < <(python3 - "${sizes[@]:0:7}" <<'PY'
import sys
s = [int(x) for x in sys.argv[1:]]
k = max(range(1, 6), key=lambda i: s[i])          # 0-based 1..5: records 2..6
rest = max(v for i, v in enumerate(s) if i != k)
print(k + 1 if s[k] > rest + 2048 else 0, rest)
PY
)
  [ "$k" -gt 0 ] && break
  step "attempt $attempt: records 1..7 are ${sizes[*]:0:7} bytes: none well above the rest"
done
[ "$k" -gt 0 ] || fail "no record of 2..6 well above the others in 5 recordings"
limit=$((others + 1024))   # the records' headers fit below it
step "record $k: ${sizes[$((k - 1))]} bytes; the others up to $others; max_msg_size $limit"

nport=$(nats_free_ports 1)
nats-server -js -sd "$d/store" -a 127.0.0.1 -p "$nport" >"$d/nats.log" 2>&1 &
pids+=("$!")
for _ in $(seq 100); do grep -q "Server is ready" "$d/nats.log" && break; sleep 0.1; done
stream_cfg() {   # MAX_MSG_SIZE
  echo '{"name":"HOLES","subjects":["HOLES.>"],"storage":"file","num_replicas":1,"max_msg_size":'"$1"',"duplicate_window":600000000000}'
}
nats_js_api "$nport" '$JS.API.STREAM.CREATE.HOLES' "$(stream_cfg "$limit")" >"$d/create.out" ||
  fail "cannot create the stream HOLES: $(cat "$d/create.out")"
port=$(nats_free_ports 1)
start_collector() {   # LOG
  "$perfrec" collect --listen "127.0.0.1:$port" --nats "nats://127.0.0.1:$nport" \
    --stream HOLES --replicas 1 2>"$1" &
  cpid=$!
  pids+=("$cpid")
  for _ in $(seq 300); do grep -q "listening on" "$1" 2>/dev/null && return 0; sleep 0.1; done
  fail "the collector did not listen"
}
stream() {   # OUT [streamclient options]
  local out=$1
  shift
  python3 "$client" "$port" "$d/src.prec" --host h1 --session holes \
    --sid 0123456789abcdef0123456789abcdef "$@" >"$d/$out"
  cat "$d/$out"
}
start_collector "$d/coll1.log"

step "records 1..7: $k is refused, the ones after it are stored"
stream first.out --send 1-7 --wait 5
grep -q "^refusal definitive=0 " "$d/first.out" || fail "no transient refusal"
grep -q "JetStream refused record $k:" "$d/coll1.log" || fail "record $k was not the one refused"
grep -q "^ack seq=\([$k-9]\|[1-9][0-9]\)" "$d/first.out" && fail "records past the hole were acknowledged"
nats_js_api "$nport" '$JS.API.STREAM.INFO.HOLES' '' >"$d/info.out" || fail "no stream info"
grep -q '"messages":6,' "$d/info.out" ||
  fail "the subject does not hold records 1..7 but $k (a hole): $(cat "$d/info.out")"

step "the limit lifted; $k..7 again from resend_from $k: the hole filled"
nats_js_api "$nport" '$JS.API.STREAM.UPDATE.HOLES' "$(stream_cfg -1)" >"$d/update.out" ||
  fail "cannot lift the limit: $(cat "$d/update.out")"
stream second.out --resend-from "$k" --send "$k-7" --wait 3
grep -q "^welcome next_seq=$k " "$d/second.out" || fail "the stream did not resume at its hole"
grep -q "^ack seq=7" "$d/second.out" || fail "records $k..7 were not all acknowledged"

step "a new collector, a hello without resend_from"
kill "$cpid"
wait "$cpid" 2>/dev/null || true
start_collector "$d/coll2.log"
stream third.out --wait 2
grep -q "^welcome next_seq=8 " "$d/third.out" ||
  fail "the stream resumed at $(sed -n 's/^welcome next_seq=\([0-9]*\).*/\1/p' "$d/third.out"), not 8"
echo "test_js_filled_hole: ok"
