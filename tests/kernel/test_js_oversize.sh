#!/usr/bin/env bash
# test_js_oversize.sh - a record larger than the NATS servers' max_payload.
# A recorder cuts a frame once it holds the frame size, so the packet that
# crossed it can carry a record past the room REC_WIRE_FRAME_ROOM leaves
# (a frame of packets that do not compress, one huge packet). JetStream
# cannot take such a record and no resend makes it smaller: the collector
# refuses it definitively, once, naming the record, the limit and the fix,
# so the recorder stops streaming at once and keeps its -o copy (before,
# the refusal was transient: the recorder reconnected and resent the same
# record until --finish-timeout, and nothing after it was archived).
# A server with max_payload 100 KB, and a client speaking the stream
# protocol (tests/lib/streamclient.py) that sends a real recording's
# records, up to the first one above 100 KB.
set -euo pipefail
# shellcheck source=../lib/kerntest.sh
. "$(dirname "$0")/../lib/kerntest.sh"
kt_begin test_js_oversize jsbig
# shellcheck source=../lib/nats_cluster.sh
source "$src/tests/lib/nats_cluster.sh"
kt_on_fail() { kt_tail_logs "$d"/*.log "$d"/*.out; }
kt_need_nats
kt_need_perf

nport=$(nats_free_ports 1)
cat >"$d/nats.conf" <<CONF
listen: 127.0.0.1:$nport
max_payload: 100KB
jetstream { store_dir: "$d/store" }
CONF
nats-server -c "$d/nats.conf" >"$d/nats.log" 2>&1 &
pids+=("$!")
for _ in $(seq 100); do grep -q "Server is ready" "$d/nats.log" && break; sleep 0.1; done
port=$(nats_free_ports 1)
"$perfrec" collect --listen "127.0.0.1:$port" --nats "nats://127.0.0.1:$nport" --replicas 1 \
  2>"$d/coll.log" &
pids+=("$!")
for _ in $(seq 300); do grep -q "listening on" "$d/coll.log" 2>/dev/null && break; sleep 0.1; done
grep -q "listening on" "$d/coll.log" || fail "the collector did not listen"

# 20 kHz callchains for 4 s in frames of up to 4 MiB cut every 4 s: a
# sample frame of ~300 KB compressed on an idle machine too (at 4 kHz and
# 960 KiB, the largest was 66 KB there: only a loaded host's mix of
# processes made one above 100 KB)
step "a recording in frames of 4 MiB or 4 s, both CPUs busy"
"$build/tests/pingpong" 1000000000 0 0 500 >/dev/null &
pids+=("$!")
"$perfrec" record -a -g -F 20000 -d 4 --flush-ms 4000 --frame-size 4m -q -o "$d/src.prec" \
  2>"$d/src.err" || fail "the recording failed: $(cat "$d/src.err")"

step "its records streamed as they are, up to the first above 100 KB"
client=$src/tests/lib/streamclient.py
mapfile -t sizes < <(python3 "$client" records "$d/src.prec")
rec=0
for i in "${!sizes[@]}"; do
  if [ "${sizes[$i]}" -gt 102400 ]; then rec=$((i + 1)); break; fi
done
[ "$rec" -gt 0 ] || skip "the recording has no record above 100 KB"
bytes=${sizes[$((rec - 1))]}
python3 "$client" "$port" "$d/src.prec" --host h1 --session big \
  --sid 00112233445566778899aabbccddeeff --send "1-$rec" --wait 10 >"$d/client.out"
cat "$d/client.out"
grep -q "^refusal " "$d/client.out" || fail "no refusal"
grep -q "^refusal definitive=1 " "$d/client.out" || fail "the refusal is not definitive"
grep -qF "reason=record $rec is $bytes bytes, above the NATS servers' max_payload of 102400 bytes: record with a smaller --frame-size, or raise the servers' max_payload" \
  "$d/client.out" || fail "the reason does not name record $rec ($bytes bytes), the limit and the fix"
n=$(grep -c "above the NATS servers' max_payload" "$d/coll.log" || true)
[ "$n" = 1 ] || fail "the collector refused $n times, not once"
echo "test_js_oversize: ok"
